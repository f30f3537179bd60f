import type { ProviderCredential } from './registry';
import { UpstreamHttpError } from './upstream-errors';

/**
 * Minimal ElevenLabs client over Node's fetch (undici), whose global agent
 * keeps connections alive between calls. Their SDK would add a dependency for
 * two POSTs.
 */
export async function postElevenLabsAudio(
  credential: ProviderCredential,
  path: '/v1/music' | '/v1/sound-generation',
  body: Record<string, unknown>,
  signal: AbortSignal,
): Promise<Buffer> {
  const url = `${credential.baseUrl}${path}?output_format=mp3_44100_128`;
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'xi-api-key': credential.apiKey, 'content-type': 'application/json', accept: 'audio/mpeg' },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) {
    // The error body may echo the prompt; it is discarded, only the status matters.
    await response.body?.cancel().catch(() => undefined);
    throw new UpstreamHttpError(response.status, response.headers.get('retry-after'));
  }
  return Buffer.from(await response.arrayBuffer());
}
