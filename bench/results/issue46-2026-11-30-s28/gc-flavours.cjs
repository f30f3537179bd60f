const v8 = require('node:v8'); const vm = require('node:vm');
v8.setFlagsFromString('--expose-gc'); const gc = vm.runInNewContext('gc');
const rss = () => (process.memoryUsage().rss/1048576).toFixed(1);
const tot = () => (v8.getHeapStatistics().total_heap_size/1048576).toFixed(1);
let keep = []; let arr = [];
for (let i = 0; i < 600000; i++) { const o = {a: i, b: 'x' + i, c: [i, i]}; arr.push(o); if (i % 20 === 0) keep.push(o); }
arr = null;
const mode = process.argv[2];
gc(); console.log('after gc()', 'rss', rss(), 'heap', tot());
let t = performance.now();
if (mode === 'lr') gc({type:'major', flavor:'last-resort'});
if (mode === 'compact') { v8.setFlagsFromString('--compact-on-every-full-gc'); gc(); v8.setFlagsFromString('--no-compact-on-every-full-gc'); }
if (mode === 'compact2') { v8.setFlagsFromString('--compact-on-every-full-gc'); gc(); gc(); v8.setFlagsFromString('--no-compact-on-every-full-gc'); }
console.log(mode, (performance.now()-t).toFixed(1), 'ms rss', rss(), 'heap', tot());
setTimeout(() => console.log('  1s later rss', rss(), 'heap', tot(), keep.length), 1000);
