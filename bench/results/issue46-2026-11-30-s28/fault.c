#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <string.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
int main(){ size_t n=256UL<<20; char*p=mmap(0,n,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
 for(int r=0;r<3;r++){ double t=now(); for(size_t i=0;i<n;i+=4096)p[i]=1; double d=now()-t; printf("touch 256MB: %.1f ms, %.2f us/page\n",d,d*1000/(n/4096)); madvise(p,n,MADV_DONTNEED);} return 0;}
