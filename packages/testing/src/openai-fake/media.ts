/** A valid 1x1 PNG, small enough to inline; decoders accept it. */
export const TINY_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** Silent MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz): valid sync words, so sniffers see MP3. */
export function createSilentMp3(frames = 4): Buffer {
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  return Buffer.concat(Array.from({ length: frames }, () => frame));
}

/** A valid PCM WAV file (mono, 16-bit, 8 kHz) of silence. */
export function createSilentWav(samples = 800): Buffer {
  const data = samples * 2;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data, 40);
  return Buffer.concat([header, Buffer.alloc(data)]);
}

/** Content types OpenAI's /v1/audio/speech answers with per `response_format`. */
export const SPEECH_CONTENT_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** Placeholder bytes per format: real headers where cheap, so a sniffing consumer sees the right kind. */
export function createAudio(format: string): Buffer {
  switch (format) {
    case 'wav':
      return createSilentWav();
    case 'pcm':
      return Buffer.alloc(1600);
    case 'flac':
      return Buffer.concat([Buffer.from('fLaC', 'ascii'), Buffer.alloc(64)]);
    case 'opus':
      return Buffer.concat([Buffer.from('OggS', 'ascii'), Buffer.alloc(64)]);
    case 'aac':
      return Buffer.concat([Buffer.from([0xff, 0xf1, 0x50, 0x80]), Buffer.alloc(64)]);
    default:
      return createSilentMp3();
  }
}
