export * from './db';
export * from './elevenlabs-fake';
export * from './http-server';
export * from './kv';
export * from './openai-fake';
export { perTestFile } from './per-file';
export { type PromFamily, type PromMetric, parsePrometheusText } from './prometheus';
export * from './smtp-capture';
export * from './stripe-fake';
