import type { LoopbackServer } from '../http-server';
import type { Recorder } from './recorder';
import type { Script } from './script';

/**
 * The control surface every scripted fake exposes: where it listens, its
 * request log and waiters, and the behaviour script. Closing marks the
 * recorder first, so the fake's own socket teardown is not logged as aborts.
 */
export function scriptedFakeControls<B>(server: LoopbackServer, recorder: Recorder, script: Script<B>) {
  return {
    url: server.url,
    port: server.port,
    close: () => {
      recorder.closing = true;
      return server.close();
    },
    requests: recorder.requests,
    set: script.set,
    setFor: script.setFor,
    enqueue: script.enqueue,
    reset: script.reset,
    respond: script.respond,
    waitForRequest: recorder.waitForRequest,
    waitForAbort: recorder.waitForAbort,
  };
}
