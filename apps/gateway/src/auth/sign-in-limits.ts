import type { Limit } from '@platform/service-kit';

const WINDOW_15_MIN = 15 * 60 * 1000;

/** Sign-in limits; numbers the spec leaves open, chosen to stop abuse but not a person retrying. */
export const SIGN_IN_LIMITS = {
  linkPerAddress: { name: 'magic-link:address', max: 5, windowMs: WINDOW_15_MIN },
  linkPerIp: { name: 'magic-link:ip', max: 30, windowMs: WINDOW_15_MIN },
  failedVerifyPerIp: { name: 'verify-fail:ip', max: 10, windowMs: WINDOW_15_MIN },
} satisfies Record<string, Limit>;
