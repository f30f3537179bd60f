export * from './http-server';
export * from './stripe-fake';
