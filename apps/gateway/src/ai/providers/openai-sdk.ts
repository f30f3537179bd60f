import type OpenAI from 'openai';

let sdk: typeof OpenAI | undefined;

/**
 * The `openai` SDK, loaded when first asked for. Only images, speech and
 * embeddings call providers through it (chat uses openai-chat.ts), and it
 * costs each process ~5 MB of heap once loaded (issue 46).
 */
export function openAiSdk(): typeof OpenAI {
  if (sdk === undefined) sdk = (require('openai') as { default: typeof OpenAI }).default;
  return sdk;
}

/** The SDK if something has loaded it, else undefined: before that no error can be one of its classes. */
export function loadedOpenAiSdk(): typeof OpenAI | undefined {
  return sdk;
}
