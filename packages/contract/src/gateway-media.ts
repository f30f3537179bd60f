import { z } from 'zod';
import { ZLaneName, ZModelName, ZProjectId } from './gateway-common';

/** The media endpoints (`POST /api/v1/ai/<kind>`), also the ledger's `endpoint` of their records. */
export const MEDIA_KINDS = ['image', 'tts', 'music', 'soundfx'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/** Fields every media request shares: accounting project, optional lane and model. */
const mediaCommon = {
  project_id: ZProjectId,
  lane: ZLaneName.optional().meta({ description: 'Lane to use; defaults to the media lane of the gateway.' }),
  model: ZModelName.optional(),
};

/** Image sizes the OpenAI-compatible image APIs accept. */
export const IMAGE_SIZES = ['256x256', '512x512', '1024x1024', '1024x1792', '1792x1024'] as const;

/** `POST /api/v1/ai/image`. */
export const ZImageRequest = z
  .object({
    prompt: z.string().min(1).max(4000).meta({ example: 'a lighthouse at dawn, watercolour' }),
    ...mediaCommon,
    size: z.enum(IMAGE_SIZES).default('1024x1024'),
    n: z.number().int().min(1).max(4).default(1).meta({ description: 'Number of images.' }),
  })
  .meta({ id: 'ImageRequest' });
export type ImageRequest = z.infer<typeof ZImageRequest>;
export type ImageInput = z.input<typeof ZImageRequest>;

/** One generated image, inline as base64 PNG. */
export const ZGeneratedImage = z
  .object({
    b64_json: z.string().meta({ description: 'Base64 PNG data.' }),
    content_type: z.literal('image/png'),
  })
  .meta({ id: 'GeneratedImage' });
export type GeneratedImage = z.infer<typeof ZGeneratedImage>;

/** `POST /api/v1/ai/image` 200. */
export const ZImageResponse = z
  .object({ images: z.array(ZGeneratedImage), model_used: z.string().meta({ example: 'dall-e-3' }) })
  .meta({ id: 'ImageResponse' });
export type ImageResponse = z.infer<typeof ZImageResponse>;

/** Audio formats of text-to-speech. */
export const TTS_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type TtsFormat = (typeof TTS_FORMATS)[number];

/**
 * Content-Type of each text-to-speech format. `pcm` is raw 24 kHz 16-bit
 * little-endian mono; `audio/L16` would claim big-endian, so a generic type is used.
 */
export const MEDIA_AUDIO_CONTENT_TYPES: Readonly<Record<TtsFormat, string>> = Object.freeze({
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
});

/** `POST /api/v1/ai/tts`: answered with the audio bytes. */
export const ZTtsRequest = z
  .object({
    text: z.string().min(1).max(4096).meta({ description: 'Text to speak.' }),
    ...mediaCommon,
    voice: z.string().min(1).max(64).default('alloy'),
    format: z.enum(TTS_FORMATS).default('mp3'),
    speed: z.number().min(0.25).max(4).optional(),
  })
  .meta({ id: 'TtsRequest' });
export type TtsRequest = z.infer<typeof ZTtsRequest>;
export type TtsInput = z.input<typeof ZTtsRequest>;

/** `POST /api/v1/ai/music`: answered with `audio/mpeg` bytes. */
export const ZMusicRequest = z
  .object({
    prompt: z.string().min(1).max(2000).meta({ example: 'calm piano, slow tempo' }),
    ...mediaCommon,
    duration_seconds: z.number().min(3).max(300).default(30),
  })
  .meta({ id: 'MusicRequest' });
export type MusicRequest = z.infer<typeof ZMusicRequest>;
export type MusicInput = z.input<typeof ZMusicRequest>;

/** `POST /api/v1/ai/soundfx`: answered with `audio/mpeg` bytes. */
export const ZSoundFxRequest = z
  .object({
    prompt: z
      .string()
      .min(1)
      .max(1000)
      .meta({ description: 'Description of the sound.', example: 'door creaks open' }),
    ...mediaCommon,
    duration_seconds: z
      .number()
      .min(0.5)
      .max(22)
      .optional()
      .meta({ description: 'Length of the effect; the provider chooses when omitted.' }),
  })
  .meta({ id: 'SoundFxRequest' });
export type SoundFxRequest = z.infer<typeof ZSoundFxRequest>;
export type SoundFxInput = z.input<typeof ZSoundFxRequest>;

/** Content-Type of music and sound-effect responses. */
export const MPEG_AUDIO_CONTENT_TYPE = 'audio/mpeg';
