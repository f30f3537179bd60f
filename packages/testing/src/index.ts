export * from './elevenlabs-fake';
export * from './http-server';
export * from './openai-fake';
export * from './smtp-capture';
export * from './stripe-fake';
