import type {
  GeneratedImage,
  ImageRequest,
  MusicRequest,
  SoundFxRequest,
  TtsRequest,
} from '@platform/contract';
import { AppError } from '@platform/errors';
import { type MediaKind, selectTargets, type Target } from './config/lanes';
import type { AttemptContext, FallbackResult } from './fallback';
import { postElevenLabsAudio } from './providers/elevenlabs';
import { UpstreamHttpError } from './providers/upstream-errors';
import { runTargets } from './run-targets';
import type { AiRuntime, StoredKeys } from './runtime';

/** Lane membership (when given) and the endpoint's targets for the requested model. */
export function selectMediaTargets(
  rt: Pick<AiRuntime, 'config' | 'allowedLanes'>,
  kind: MediaKind,
  req: { lane?: string | undefined; model?: string | undefined },
): readonly Target[] {
  if (req.lane !== undefined && !rt.allowedLanes.has(req.lane)) throw new AppError('unknown_lane');
  const targets = selectTargets(rt.config.media[kind], req.model);
  if (!targets) throw new AppError('unknown_model');
  return targets;
}

export type MediaCall = { targets: readonly Target[]; storedKeys: StoredKeys; clientSignal: AbortSignal };

function runMedia<T>(
  rt: AiRuntime,
  kind: MediaKind,
  call: MediaCall,
  attempt: (ctx: AttemptContext) => Promise<T>,
): Promise<FallbackResult<T>> {
  // Media answers arrive whole, so the per-target timeout covers the full download.
  return runTargets(rt, { endpoint: kind, ...call, attempt });
}

export async function generateImage(rt: AiRuntime, req: ImageRequest, call: MediaCall) {
  const result = await runMedia(rt, 'image', call, async ({ target, credential, signal }) => {
    // DALL-E answers with URLs unless asked for base64; GPT image models only do base64 and refuse the option.
    const responseFormat = target.model.startsWith('dall-e') ? { response_format: 'b64_json' as const } : {};
    const answer = await rt.providers
      .client(credential)
      .images.generate(
        { model: target.model, prompt: req.prompt, n: req.n, size: req.size, ...responseFormat },
        { signal },
      );
    const images: GeneratedImage[] = (answer.data ?? []).flatMap((d) =>
      d.b64_json ? [{ b64_json: d.b64_json, content_type: 'image/png' as const }] : [],
    );
    // A 200 without image data is a provider fault like a 502: the next target may do better.
    if (images.length === 0) throw new UpstreamHttpError(502, null);
    return images;
  });
  return { images: result.value, result };
}

export async function synthesizeSpeech(rt: AiRuntime, req: TtsRequest, call: MediaCall) {
  const result = await runMedia(rt, 'tts', call, async ({ target, credential, signal }) => {
    const response = await rt.providers.client(credential).audio.speech.create(
      {
        model: target.model,
        input: req.text,
        voice: req.voice,
        response_format: req.format,
        ...(req.speed === undefined ? {} : { speed: req.speed }),
      },
      { signal },
    );
    return Buffer.from(await response.arrayBuffer());
  });
  return { audio: result.value, result };
}

export async function composeMusic(rt: AiRuntime, req: MusicRequest, call: MediaCall) {
  const result = await runMedia(rt, 'music', call, ({ target, credential, signal }) =>
    postElevenLabsAudio(
      credential,
      '/v1/music',
      {
        prompt: req.prompt,
        music_length_ms: Math.round(req.duration_seconds * 1000),
        model_id: target.model,
      },
      signal,
    ),
  );
  return { audio: result.value, result };
}

export async function generateSoundEffect(rt: AiRuntime, req: SoundFxRequest, call: MediaCall) {
  const result = await runMedia(rt, 'soundfx', call, ({ target, credential, signal }) =>
    postElevenLabsAudio(
      credential,
      '/v1/sound-generation',
      {
        text: req.prompt,
        model_id: target.model,
        ...(req.duration_seconds === undefined ? {} : { duration_seconds: req.duration_seconds }),
      },
      signal,
    ),
  );
  return { audio: result.value, result };
}
