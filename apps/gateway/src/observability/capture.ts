import type { KeyValueStore } from '@platform/db';
import type { Logger } from '@platform/logging';
import { redactText } from '@platform/logging';
import type { Clock } from '@platform/service-kit';
import type { RawSql } from '../batching/raw-sql';
import { createOwnerCache } from '../cache/owner-cache';
import { findCapturedProjects } from './project-settings-repo';

/** Channel on which instances tell each other to drop an owner's cached capture settings. */
export const CAPTURE_CHANNEL = 'project-capture:changed';

/**
 * Most characters of a captured prompt, and of a captured answer, kept per
 * request (docs/observability.md#prompt-and-answer-capture); the rest is cut
 * and the cut is said at the end.
 */
export const CAPTURE_MAX_CHARS = 16_384;

const NONE: ReadonlySet<string> = new Set();

/**
 * Which of an owner's projects capture prompts and answers, for the AI hot
 * path: one cached promise per owner (a set, empty for almost everyone),
 * dropped on every change on any instance and expiring after 30 s, so a
 * request costs one cache read whether capture is on or off.
 */
export type ProjectCapture = {
  capturedProjects(ownerUserId: string): Promise<ReadonlySet<string>>;
  /** Drops the owner's entry here and tells the other instances to do the same. */
  invalidate(ownerUserId: string): Promise<void>;
  close(): Promise<void>;
};

export function createProjectCapture(opts: {
  /** The pool's raw SQL (findCapturedProjects stays off Prisma). */
  sql: RawSql;
  kv: KeyValueStore;
  logger: Logger;
  clock: Clock;
  cacheTtlMs?: number;
}): ProjectCapture {
  const cache = createOwnerCache<ReadonlySet<string>>({
    kv: opts.kv,
    logger: opts.logger,
    clock: opts.clock,
    channel: CAPTURE_CHANNEL,
    ttlMs: opts.cacheTtlMs,
    // A setting that cannot be read is taken as off (logged): the request goes on, without its text.
    load: (owner) =>
      findCapturedProjects(opts.sql, owner).then(
        (projects) => (projects.length === 0 ? NONE : new Set(projects)),
        (err: unknown) => {
          opts.logger.warn(
            { err: err instanceof Error ? err.message : String(err) },
            'project capture settings unreadable; content not captured',
          );
          return NONE;
        },
      ),
  });
  return { capturedProjects: cache.get, invalidate: cache.invalidate, close: cache.close };
}

/** What the request log keeps of a captured request. */
export type CapturedContent = { prompt: string | null; answer: string | null };

/**
 * `text` redacted and cut to CAPTURE_MAX_CHARS, saying how much was cut;
 * NUL and lone surrogates (which Postgres text refuses, failing the whole
 * batch) become U+FFFD.
 */
export function capturedText(text: string): string {
  // Redaction runs on more than is kept, so a key cut in half at the edge is still seen whole.
  const head = text.length > 2 * CAPTURE_MAX_CHARS ? text.slice(0, 2 * CAPTURE_MAX_CHARS) : text;
  const redacted = redactText(head.toWellFormed().replaceAll('\u0000', '\uFFFD'));
  if (text.length <= CAPTURE_MAX_CHARS && redacted.length <= CAPTURE_MAX_CHARS) return redacted;
  return `${redacted.slice(0, CAPTURE_MAX_CHARS)}\n[cut: ${text.length} characters in all]`;
}

/** A chat message as captured: its role and content (text, or parts kept as JSON). */
export type CapturedMessage = { role: string; content?: unknown };

/** One line per message, `role: content` (content that is not text as JSON), as people read a chat. */
function transcriptOf(messages: readonly CapturedMessage[]): string {
  return messages
    .map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? null)}`)
    .join('\n\n');
}

/**
 * The prompt and answer of a request whose project captures content, for
 * the request log: chat-shaped requests only (chat, streams, the /v1
 * formats); media and embeddings keep none. Only called when capture is on.
 */
export function captureContent(
  messages: readonly CapturedMessage[] | undefined,
  answer: string | undefined,
): CapturedContent {
  return {
    prompt: messages ? capturedText(transcriptOf(messages)) : null,
    answer: answer === undefined ? null : capturedText(answer),
  };
}
