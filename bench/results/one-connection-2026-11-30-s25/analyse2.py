import json,sys,collections,bisect
for f in sys.argv[1:]:
    d=json.load(open(f))
    reqs=d['reqs']
    if len(reqs)<100: continue
    durs=sorted(r[1] for r in reqs); n=len(durs)
    print(f,'requests',n,'p50 %.3f p99 %.3f'%(durs[n//2],durs[int(n*.99)]))
    rd=sorted(x[1] for x in d['redis']); print(' redis cmds',len(rd),'p50 %.3f p99 %.3f max %.2f'%(rd[len(rd)//2],rd[int(len(rd)*.99)],rd[-1]))
    names=collections.Counter(x[2] for x in d['redis']); print(' ',names.most_common(6))
    for kind in ('headers','done'):
        u=sorted(x[1] for x in d['up'] if x[2]==kind); 
        if u: print(' upstream',kind,len(u),'p50 %.3f p99 %.3f'%(u[len(u)//2],u[int(len(u)*.99)]))
    thr=durs[int(n*.985)]
    slow=[r for r in reqs if r[1]>=thr]
    # for each slow request: sum of redis wait inside it, upstream time inside, gc overlap
    agg=collections.Counter()
    for s,dur in slow:
        e=s+dur
        rw=sum(x[1] for x in d['redis'] if x[0]>=s and x[0]<e)
        uw=sum(x[1] for x in d['up'] if x[0]>=s and x[0]<e and x[2]=='done')
        gw=sum(min(e,g[0]+g[1])-max(s,g[0]) for g in d['gcs'] if g[0]<e and g[0]+g[1]>s)
        agg['total']+=dur; agg['redis']+=rw; agg['upstream']+=uw; agg['gc']+=gw
    print(' slow',len(slow),'>= %.2f ms; mean per slow request: total %.2f redis-wait %.2f upstream %.2f gc %.2f'%(thr,agg['total']/len(slow),agg['redis']/len(slow),agg['upstream']/len(slow),agg['gc']/len(slow)))
    fast=[r for r in reqs if r[1]<=durs[n//2]][:2000]
    agg=collections.Counter()
    for s,dur in fast:
        e=s+dur
        agg['total']+=dur; agg['redis']+=sum(x[1] for x in d['redis'] if x[0]>=s and x[0]<e); agg['upstream']+=sum(x[1] for x in d['up'] if x[0]>=s and x[0]<e and x[2]=='done')
    print(' typical (<=p50): total %.2f redis-wait %.2f upstream %.2f'%(agg['total']/len(fast),agg['redis']/len(fast),agg['upstream']/len(fast)))
