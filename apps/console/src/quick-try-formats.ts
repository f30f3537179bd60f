/**
 * The wire formats the quick try can speak: the native chat stream and the
 * three client formats of `/v1` (docs/gateway-ai.md). Each says where to send
 * one streamed message and how to read its events; the API key goes in
 * `x-api-key`, which every one of them accepts.
 */

export type QuickTryFormat = 'native' | 'openai' | 'anthropic' | 'responses';

/** What one event means to the quick try. */
export type StreamStep =
  | { text: string }
  /** The model that answers, when a format names it before the end. */
  | { model: string }
  | { done: { model: string; totalTokens: number; finish: string } }
  | { failed: string }
  | null;

export type FormatSpec = {
  label: string;
  /** Path relative to the page (so a path prefix in front of the gateway works). */
  path: string;
  body(input: { lane: string; project: string; message: string }): object;
  /** Sends the project as a header (the /v1 formats) rather than in the body. */
  projectHeader: boolean;
  read(event: string, data: string): StreamStep;
};

const MAX_TOKENS = 512;

type Usage = { total_tokens?: number; input_tokens?: number; output_tokens?: number };

/** The message of an error body in any of the gateway's three shapes. */
export function errorMessageOf(body: unknown): string | undefined {
  const error = (body as { error?: unknown } | null)?.error;
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : undefined;
}

export const FORMATS: Readonly<Record<QuickTryFormat, FormatSpec>> = {
  native: {
    label: 'Native (/api/v1/ai/chat/stream)',
    path: 'api/v1/ai/chat/stream',
    projectHeader: false,
    body: ({ lane, project, message }) => ({
      lane,
      project_id: project,
      messages: [{ role: 'user', content: message }],
      max_tokens: MAX_TOKENS,
    }),
    read(event, data) {
      const parsed = JSON.parse(data);
      if (event === 'chunk') return { text: parsed.content };
      if (event === 'done')
        return {
          done: {
            model: parsed.model_used,
            totalTokens: parsed.usage.total_tokens,
            finish: parsed.finish_reason,
          },
        };
      if (event === 'error') return { failed: parsed.error };
      return null;
    },
  },
  openai: {
    label: 'OpenAI chat (/v1/chat/completions)',
    path: 'v1/chat/completions',
    projectHeader: true,
    body: ({ lane, message }) => ({
      model: lane,
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: MAX_TOKENS,
      messages: [{ role: 'user', content: message }],
    }),
    read(_event, data) {
      if (data === '[DONE]') return null;
      const parsed = JSON.parse(data);
      if (parsed.error) return { failed: errorMessageOf(parsed) ?? 'upstream AI service error' };
      const choice = parsed.choices?.[0];
      if (choice?.delta?.content) return { text: choice.delta.content };
      if (parsed.usage)
        return { done: { model: parsed.model, totalTokens: parsed.usage.total_tokens, finish: 'stop' } };
      return null;
    },
  },
  anthropic: {
    label: 'Anthropic messages (/v1/messages)',
    path: 'v1/messages',
    projectHeader: true,
    body: ({ lane, message }) => ({
      model: lane,
      stream: true,
      max_tokens: MAX_TOKENS,
      messages: [{ role: 'user', content: message }],
    }),
    read(event, data) {
      const parsed = JSON.parse(data);
      if (event === 'content_block_delta' && parsed.delta?.type === 'text_delta')
        return { text: parsed.delta.text };
      if (event === 'message_delta') {
        const usage = (parsed.usage ?? {}) as Usage & {
          cache_read_input_tokens?: number;
          cache_creation_input_tokens?: number;
        };
        const total =
          (usage.input_tokens ?? 0) +
          (usage.cache_read_input_tokens ?? 0) +
          (usage.cache_creation_input_tokens ?? 0) +
          (usage.output_tokens ?? 0);
        return { done: { model: '', totalTokens: total, finish: parsed.delta?.stop_reason ?? '' } };
      }
      if (event === 'error') return { failed: errorMessageOf(parsed) ?? 'upstream AI service error' };
      return null;
    },
  },
  responses: {
    label: 'OpenAI Responses (/v1/responses)',
    path: 'v1/responses',
    projectHeader: true,
    body: ({ lane, message }) => ({
      model: lane,
      stream: true,
      max_output_tokens: MAX_TOKENS,
      input: message,
    }),
    read(event, data) {
      const parsed = JSON.parse(data);
      if (event === 'response.output_text.delta') return { text: parsed.delta };
      if (event === 'response.completed' || event === 'response.incomplete') {
        const { response } = parsed;
        return {
          done: {
            model: response.model,
            totalTokens: response.usage?.total_tokens ?? 0,
            finish: response.status,
          },
        };
      }
      if (event === 'error') return { failed: parsed.message ?? 'upstream AI service error' };
      return null;
    },
  },
};
