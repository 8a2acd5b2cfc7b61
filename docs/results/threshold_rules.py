#!/usr/bin/env python3
"""Apply the decision rules of docs/results/threshold-rule.md to the P(1)
that `fasd eval --scores FILE` keeps, and print per rule and variant the
test metrics (mean over seeds), U = mean over the trained predictors of
(Acc + macro-F1)/2, and the paired differences against the GCN.

    fasd eval --db DB --seeds 10 --variants fasd,fasd_gcn,no_diffusion,gcn,mlp,majority \
        --probe=false --scores nba.scores.jsonl
    python3 docs/results/threshold_rules.py nba.scores.jsonl

Standard library only. `platt` and `valacc` mirror fasd.PlattThreshold and
fasd.AccuracyThreshold; `prior` mirrors fasd.ShiftedPriorThreshold; `rate`
(docs/results/rate-threshold-rule.md) the validation positive rate.
"""
import json, math, sys, collections
T975 = {1:12.706,2:4.303,3:3.182,4:2.776,5:2.571,6:2.447,7:2.365,8:2.306,9:2.262,10:2.228,11:2.201,12:2.179,13:2.160,14:2.145,15:2.131,19:2.093,29:2.045}
def tq(df): return T975.get(df, 1.96 if df>29 else 2.1)
def logit(p):
    p=min(max(p,1e-7),1-1e-7); return math.log(p/(1-p))
def sig(x):
    if x>=0: return 1/(1+math.exp(-x))
    e=math.exp(x); return e/(1+e)
def prior_thr(lab, train, val):
    pt=sum(lab[u] for u in train)/len(train); pv=sum(lab[u] for u in val)/len(val)
    nt,nv=len(train),len(val)
    p=(pt*nt+pv*nv)/(nt+nv); se=math.sqrt(p*(1-p)*(1/nt+1/nv))
    if not se>0 or abs(pv-pt)/se<2.576: return 0.5
    if not(0<pt<1 and 0<pv<1): return 0.5
    return 1/(1+math.exp(logit(pv)-logit(pt)))
def platt_thr(s, y, fb, lam=1e-3):
    if not (any(v==1 for v in y) and any(v==0 for v in y)): return fb
    z=[logit(p) for p in s]
    def loss(a,b):
        l=lam*(a*a+b*b)/2
        for zi,yi in zip(z,y):
            m=a*zi+b; l+=max(m,0)+math.log1p(math.exp(-abs(m)))-yi*m
        return l
    a,b=0.0,0.0; cur=loss(a,b)
    for _ in range(100):
        ga=gb=0; haa=hab=hbb=0
        for zi,yi in zip(z,y):
            q=sig(a*zi+b); r=q-yi; w=q*(1-q)
            ga+=r*zi; gb+=r; haa+=w*zi*zi; hab+=w*zi; hbb+=w
        ga+=lam*a; gb+=lam*b; haa+=lam; hbb+=lam
        det=haa*hbb-hab*hab
        if not det>0: break
        da=( hbb*ga-hab*gb)/det; db=(-hab*ga+haa*gb)/det
        step=1.0; nxt=loss(a-da,b-db)
        while nxt>cur and step>1e-6:
            step/=2; nxt=loss(a-step*da,b-step*db)
        a-=step*da; b-=step*db; cur=nxt
        if step*(abs(da)+abs(db))<1e-12: break
    if not a>0: return fb
    return 1/(1+math.exp(b/a))
def valacc_thr(s, y, fb):
    pairs=sorted(zip(s,y)); n=len(pairs)
    # threshold below all: all predicted 1
    correct=sum(y); best=correct; cands=[]
    vals=[p for p,_ in pairs]
    cands=[(correct, vals[0]-1e-9 if vals[0]>0 else 0.0)]
    i=0
    while i<n:
        j=i
        while j<n and pairs[j][0]==pairs[i][0]:
            correct += 1 if pairs[j][1]==0 else -1; j+=1
        t = (pairs[i][0]+pairs[j][0])/2 if j<n else min(1.0, pairs[i][0]+1e-9)
        cands.append((correct,t)); i=j
    m=max(c for c,_ in cands)
    ties=[t for c,t in cands if c==m]
    lf=logit(fb)
    return min(ties, key=lambda t: abs(logit(t)-lf))
def rate_thr(s, y, fb):
    """docs/results/rate-threshold-rule.md: the τ whose share of validation
    scores above it is closest to the validation positive rate; ties go to
    the τ closest (in logit) to fb. Mirrors fasd.RateThreshold."""
    if not s: return fb
    vals=sorted(set(s)); n=len(s); target=sum(y)/n
    cands=[max(0.0, vals[0]-1e-9)]
    cands+=[(a+b)/2 for a,b in zip(vals, vals[1:])]
    cands.append(min(1.0, vals[-1]+1e-9))
    lf=logit(fb); best=None
    for t in cands:
        key=(abs(sum(1 for p in s if p>t)/n-target), abs(logit(t)-lf))
        if best is None or key<best[0]: best=(key,t)
    return best[1]
def metrics(p1, thr, lab, sens, nodes):
    tp=fp=fn=tn=0; g=[[0,0,0,0],[0,0,0,0]] # n, pred, pos, tp
    sc=[];ys=[]
    for u in nodes:
        p=p1[u]; pr = 1 if (p is not None and p>thr) else 0; y=lab[u]; s=sens[u]
        if p is not None: sc.append(p); ys.append(y)
        if pr and y: tp+=1
        elif pr: fp+=1
        elif y: fn+=1
        else: tn+=1
        if s in (0,1):
            g[s][0]+=1; g[s][1]+=pr
            if y: g[s][2]+=1; g[s][3]+=pr
    n=len(nodes); acc=(tp+tn)/n
    f1=lambda a,b,c: 0 if a+b+c==0 else 2*a/(2*a+b+c)
    F1=f1(tp,fp,fn); mf1=(F1+f1(tn,fn,fp))/2
    dp=abs(g[0][1]/g[0][0]-g[1][1]/g[1][0]); eo=abs(g[0][3]/g[0][2]-g[1][3]/g[1][2])
    # auc
    o=sorted(zip(sc,ys)); npos=sum(ys); nneg=len(ys)-npos; r=0; i=0; rank_sum=0
    while i<len(o):
        j=i
        while j<len(o) and o[j][0]==o[i][0]: j+=1
        avg=(i+j+1)/2
        rank_sum+=avg*sum(1 for k in range(i,j) if o[k][1]==1); i=j
    auc=(rank_sum-npos*(npos+1)/2)/(npos*nneg) if npos and nneg else float('nan')
    return dict(acc=100*acc,auc=100*auc,f1=100*F1,mf1=100*mf1,dp=100*dp,eo=100*eo,pos=100*(tp+fp)/n)
RULES=['half','prior','platt','valacc','rate']
def analyse(path):
    seeds={}; res=collections.defaultdict(lambda: collections.defaultdict(list)) # res[(var,rule)][metric] list by seed
    thr_used=collections.defaultdict(list)
    for line in open(path):
        d=json.loads(line)
        if 'labels' in d: seeds[d['seed']]=d; continue
        sd=seeds[d['seed']]; lab,sens=sd['labels'],sd['sens']; p1=d['p1']; v=d['variant']
        vs=[p1[u] for u in sd['val'] if p1[u] is not None]; vy=[lab[u] for u in sd['val'] if p1[u] is not None]
        pr=prior_thr(lab,sd['train'],sd['val'])
        ths={'half':0.5,'prior':pr,'platt':platt_thr(vs,vy,pr),'valacc':valacc_thr(vs,vy,pr),'rate':rate_thr(vs,vy,pr)}
        if v=='majority': ths={'half':0.5,'prior':pr,'platt':pr,'valacc':pr,'rate':pr}  # a constant keeps the prior rule, as in fasd
        for r,t in ths.items():
            m=metrics(p1,t,lab,sens,sd['test'])
            for k,x in m.items(): res[(v,r)][k].append(x)
            thr_used[(v,r)].append(t)
    return res,thr_used
def ms(x):
    n=len(x); m=sum(x)/n; s=math.sqrt(sum((a-m)**2 for a in x)/(n-1)) if n>1 else 0; return m,s
def ci(d):
    m,s=ms(d); h=tq(len(d)-1)*s/math.sqrt(len(d)); return m,m-h,m+h
if __name__=='__main__':
    for path in sys.argv[1:]:
        res,thr=analyse(path)
        vars_=sorted({v for v,_ in res}, key=lambda v: ['fasd','fasd_gcn','no_diffusion','gcn','mlp','majority'].index(v) if v in ['fasd','fasd_gcn','no_diffusion','gcn','mlp','majority'] else 9)
        print('==',path, 'seeds', len(next(iter(res.values()))['acc']))
        for r in RULES:
            U=[]
            for v in vars_:
                m=res[(v,r)]
                if v in ('fasd','fasd_gcn','no_diffusion','gcn','mlp'): U.append((ms(m['acc'])[0]+ms(m['mf1'])[0])/2)
                print(f"{r:7s} {v:13s} acc {ms(m['acc'])[0]:6.2f}±{ms(m['acc'])[1]:5.2f} auc {ms(m['auc'])[0]:6.2f} f1 {ms(m['f1'])[0]:6.2f} mf1 {ms(m['mf1'])[0]:6.2f} dp {ms(m['dp'])[0]:6.2f} eo {ms(m['eo'])[0]:6.2f} pos {ms(m['pos'])[0]:5.1f} thr {ms(thr[(v,r)])[0]:.3f}")
            print(f"  U({r}) = {sum(U)/len(U):.3f}")
            for v in vars_:
                if v=='gcn' or ('gcn',r) not in res: continue
                a=res[(v,r)]; b=res[('gcn',r)]
                out=[]
                for k in ('acc','mf1','dp','eo'):
                    d=[x-y for x,y in zip(a[k],b[k])]; m,lo,hi=ci(d); out.append(f"{k} {m:+.2f} [{lo:+.2f},{hi:+.2f}]")
                print(f"    {v:13s} - gcn: "+"  ".join(out))
