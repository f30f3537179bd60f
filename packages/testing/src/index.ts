export * from './http-server';
export * from './openai-fake';
export * from './stripe-fake';
