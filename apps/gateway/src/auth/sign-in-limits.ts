import type { Limit } from '@platform/service-kit';

const WINDOW_15_MIN = 15 * 60 * 1000;

/** Sign-in limits; numbers the spec leaves open, chosen to stop abuse but not a person retrying. */
export const SIGN_IN_LIMITS = {
  linkPerAddress: { name: 'magic-link:address', max: 5, windowMs: WINDOW_15_MIN },
  linkPerIp: { name: 'magic-link:ip', max: 30, windowMs: WINDOW_15_MIN },
  /**
   * Failed verifies per client address; over it, further wrong codes from that
   * address get 429. A valid code always signs in, so one address behind a NAT
   * (or an unset TRUST_PROXY_HOPS behind a proxy) cannot lock others out.
   */
  failedVerifyPerIp: { name: 'verify-fail:ip', max: 10, windowMs: WINDOW_15_MIN },
  /** Attempts on one code (by hash), whatever their outcome: a used or leaked code cannot be hammered. */
  verifyPerCode: { name: 'verify:code', max: 5, windowMs: WINDOW_15_MIN },
} satisfies Record<string, Limit>;
