import json,sys,bisect
for f in sys.argv[1:]:
    d=json.load(open(f)); reqs=d['reqs']
    durs=sorted(r[1] for r in reqs); n=len(durs); thr=durs[int(n*.985)]
    red=sorted(d['redis'])
    # consumer windows: from xreadgroup start to exec end
    wins=[]; cur=None
    for t,dur,name in red:
        if name=='xreadgroup': cur=t
        if name=='exec' and cur is not None: wins.append((cur,t+dur)); cur=None
    wl=[b-a for a,b in wins]; wl.sort()
    span=reqs[-1][0]-reqs[0][0]
    cover=sum(wl)/span
    def overl(s,e): return any(a<e and b>s for a,b in wins)
    slow=[r for r in reqs if r[1]>=thr]; fast=[r for r in reqs if r[1]<thr]
    so=sum(overl(s,s+d) for s,d in slow); fo=sum(overl(s,s+d) for s,d in fast[::10])
    print(f,'windows',len(wins),'len p50 %.2f max %.2f'%(wl[len(wl)//2],wl[-1]),'cover %.1f%%'%(100*cover),'slow overlapping %d/%d'%(so,len(slow)),'fast overlapping %d/%d'%(fo,len(fast[::10])))
