if (process.env.NOENC === '1') {
const m = require('/work/main/packages/service-kit/dist/encoding-span-processor.js');
m.EncodingSpanProcessor.prototype.onEnd = function () {};
}
