// Microphone capture and reply playback for the voice agent page (AudioWorklet, no build step).

export const INPUT_RATE = 16000;
export const OUTPUT_RATE = 24000;

// Microphone → PCM16 frames of 20 ms at `rate` (16 kHz for a call, the context rate for a recording).
// Echo cancellation and noise suppression are on so the agent does not hear itself through the speakers.
export class Mic {
  constructor(onFrame, { rate = INPUT_RATE, onLevel = null } = {}) {
    this.onFrame = onFrame;
    this.rate = rate;
    this.onLevel = onLevel;
  }

  async start() {
    this.stream = await navigator.mediaDevices.getUserMedia({
      audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 },
    });
    this.ctx = new AudioContext();
    if (this.rate === 0) this.rate = this.ctx.sampleRate;
    await this.ctx.audioWorklet.addModule("/capture-worklet.js");
    this.source = this.ctx.createMediaStreamSource(this.stream);
    this.node = new AudioWorkletNode(this.ctx, "capture-processor", {
      numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1], channelCountMode: "explicit", channelCount: 2,
      processorOptions: { targetRate: this.rate, frameMs: 20 },
    });
    this.node.port.onmessage = (e) => {
      const pcm = new Int16Array(e.data);
      if (this.onLevel) this.onLevel(level(pcm));
      this.onFrame(e.data);
    };
    this.source.connect(this.node);
    this.node.connect(this.ctx.destination); // outputs silence; keeps the node pulled in every browser
    if (this.ctx.state !== "running") await this.ctx.resume();
  }

  async stop() {
    if (this.node) { this.node.port.postMessage("stop"); this.node.disconnect(); }
    if (this.source) this.source.disconnect();
    if (this.stream) this.stream.getTracks().forEach((t) => t.stop());
    if (this.ctx) await this.ctx.close();
    this.node = this.source = this.stream = this.ctx = null;
  }
}

function level(pcm) {
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i] * pcm[i];
  const rms = Math.sqrt(sum / Math.max(1, pcm.length)) / 32768;
  return Math.min(1, Math.max(0, (20 * Math.log10(rms + 1e-9) + 60) / 60));
}

// Reply audio: a jitter buffer in a worklet at the session's output rate. `onReport(kind, turn, ms)` is
// called with "playing", "mark" (every ~150 ms), "done" and "paused"; `ms` is the turn's position: ms of its
// reply audio played, which after `pause(turn, playedMs)` counts on from `playedMs`.
export class Player {
  constructor(onReport) {
    this.onReport = onReport;
    this.perTurn = new Map(); // turn → its position (ms played)
    this.pausing = 0; // pauses sent to the worklet and not acknowledged yet: its reports until then are stale
  }

  get playedMs() { // total over the page's life (for tests and the UI)
    let total = 0;
    for (const ms of this.perTurn.values()) total += ms;
    return total;
  }

  async start(rate = OUTPUT_RATE) {
    this.ctx = new AudioContext({ sampleRate: rate });
    await this.ctx.audioWorklet.addModule("/player-worklet.js");
    this.node = new AudioWorkletNode(this.ctx, "player-processor", {
      numberOfInputs: 0, numberOfOutputs: 1, outputChannelCount: [1],
      processorOptions: { prebufferMs: 80, reportMs: 150 },
    });
    this.node.port.onmessage = (e) => {
      const m = e.data;
      if (m.type === "paused") {
        this.pausing--;
        if (!m.applied) return;
      } else if (this.pausing > 0) {
        return; // from before the pause: that position and state no longer hold
      }
      if (m.type === "mark" || m.type === "done" || m.type === "paused") this.perTurn.set(m.turn, m.playedMs);
      this.onReport(m.type, m.turn, m.playedMs ?? 0);
    };
    this.node.connect(this.ctx.destination);
    if (this.ctx.state !== "running") await this.ctx.resume();
  }

  startTurn(turn) { this.node?.port.postMessage({ type: "start", turn }); }
  push(turn, buffer) { this.node?.port.postMessage({ type: "audio", turn, pcm: buffer }, [buffer]); }
  endTurn(turn) { this.node?.port.postMessage({ type: "end", turn }); }
  clear() { this.node?.port.postMessage({ type: "clear" }); }
  pause(turn, playedMs) {
    if (!this.node) return;
    this.pausing++;
    this.node.port.postMessage({ type: "pause", turn, playedMs });
  }

  async stop() {
    if (this.ctx) await this.ctx.close();
    this.ctx = this.node = null;
  }
}

// PCM16 mono → a WAV file (for an enrollment recording).
export function wavFile(chunks, rate) {
  const samples = chunks.reduce((n, c) => n + c.byteLength / 2, 0);
  const buf = new ArrayBuffer(44 + samples * 2);
  const v = new DataView(buf);
  const text = (o, s) => { for (let i = 0; i < s.length; i++) v.setUint8(o + i, s.charCodeAt(i)); };
  text(0, "RIFF"); v.setUint32(4, 36 + samples * 2, true); text(8, "WAVE"); text(12, "fmt ");
  v.setUint32(16, 16, true); v.setUint16(20, 1, true); v.setUint16(22, 1, true); v.setUint32(24, rate, true);
  v.setUint32(28, rate * 2, true); v.setUint16(32, 2, true); v.setUint16(34, 16, true); text(36, "data");
  v.setUint32(40, samples * 2, true);
  let o = 44;
  for (const c of chunks) { new Uint8Array(buf, o, c.byteLength).set(new Uint8Array(c)); o += c.byteLength; }
  return new Uint8Array(buf);
}
