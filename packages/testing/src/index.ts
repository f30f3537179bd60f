export * from './db';
export * from './elevenlabs-fake';
export * from './http-server';
export * from './kv';
export * from './openai-fake';
export * from './smtp-capture';
export * from './stripe-fake';
