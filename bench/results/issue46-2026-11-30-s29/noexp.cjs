const m = require('/work/main/packages/service-kit/dist/encoding-span-processor.js');
m.EncodingSpanProcessor.prototype.send = function () {
  if (this.timer) clearTimeout(this.timer);
  this.timer = undefined;
  for (const buffer of this.buffers.values()) if (buffer.count > 0) buffer.take();
  this.waiting = 0;
};
