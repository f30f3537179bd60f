import type { Limit } from '@platform/service-kit';

const WINDOW_15_MIN = 15 * 60 * 1000;
const WINDOW_1_HOUR = 60 * 60 * 1000;

/** How long a client address that signed in as an e-mail address counts as its owner's (KNOWN_ADDRESS). */
export const KNOWN_ADDRESS_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** Sign-in limits; numbers the spec leaves open, chosen to stop abuse but not a person retrying. */
export const SIGN_IN_LIMITS = {
  /** Links for one e-mail address requested from one client address: a person retrying, not a flood. */
  linkPerAddressAndIp: { name: 'magic-link:address-ip', max: 5, windowMs: WINDOW_15_MIN },
  /**
   * Links for one e-mail address from all client addresses, except those it has
   * signed in from (its owner's): bounds the mail strangers can send to one
   * mailbox, and strangers exhausting it do not block the owner's known address.
   */
  linkPerAddress: { name: 'magic-link:address', max: 20, windowMs: WINDOW_1_HOUR },
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
