import json,sys,collections
for f in sys.argv[1:]:
    d=json.load(open(f)); reqs=d['reqs']
    durs=sorted(r[1] for r in reqs); n=len(durs); thr=durs[int(n*.985)]
    red=sorted(d['redis'])
    wins=[]; cur=None
    for t,dur,name in red:
        if name=='xreadgroup': cur=t
        if name=='exec' and cur is not None: wins.append((cur,t+dur)); cur=None
    def overl(s,e): return any(a<e and b>s for a,b in wins)
    slow=[r for r in reqs if r[1]>=thr and not overl(r[0],r[0]+r[1])]
    print(f,len(slow),'slow outside consumer windows')
    rows=[]
    for s,dur in slow[:400]:
        e=s+dur
        rs=[x for x in d['redis'] if x[0]>=s and x[0]<e]
        us=[x for x in d['up'] if x[0]>=s and x[0]<e and x[2]=='done']
        gc=sum(min(e,g[0]+g[1])-max(s,g[0]) for g in d['gcs'] if g[0]<e and g[0]+g[1]>s)
        rows.append((dur,[round(x[1],2) for x in rs],[round(x[1],2) for x in us],round(gc,2)))
    for r in rows[:25]: print('  total %.2f redis %s up %s gc %s'%r)
    # which hop is the long one
    c=collections.Counter()
    for dur,rs,us,gc in rows:
        parts={'redis1':rs[0] if rs else 0,'redis2':sum(rs[1:]),'up':sum(us),'gc':gc}
        k=max(parts,key=parts.get); c[k]+=1
    print(' longest part:',c)
