// Throwaway: this process loads the previous otlp-protobuf.js (Buffer hex writes).
const Module = require('node:module');
const orig = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  const resolved = orig.call(this, request, parent, ...rest);
  return resolved.endsWith('/service-kit/dist/otlp-protobuf.js') ? '/tmp/otlp-old.js' : resolved;
};
