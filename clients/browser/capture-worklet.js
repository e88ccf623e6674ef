// Microphone capture: mono float input at the context rate → PCM16 frames at `targetRate`.
// Downsampling averages the input samples that fall in each output period (a box filter: enough
// anti-aliasing for speech recognition), so any context rate (44.1k, 48k, …) works.
class CaptureProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const opts = options.processorOptions || {};
    this.targetRate = opts.targetRate || 16000;
    this.frameSamples = Math.round(this.targetRate * (opts.frameMs || 20) / 1000);
    this.ratio = sampleRate / this.targetRate;
    this.frame = new Int16Array(this.frameSamples);
    this.filled = 0;
    this.acc = 0;
    this.count = 0;
    this.pos = 0; // input position within the current output period
    this.active = true;
    this.port.onmessage = (e) => { if (e.data === "stop") this.active = false; };
  }

  emit(value) {
    const s = Math.max(-1, Math.min(1, value));
    this.frame[this.filled++] = s < 0 ? s * 0x8000 : s * 0x7fff;
    if (this.filled === this.frameSamples) {
      const out = this.frame;
      this.port.postMessage(out.buffer, [out.buffer]);
      this.frame = new Int16Array(this.frameSamples);
      this.filled = 0;
    }
  }

  process(inputs) {
    const input = inputs[0];
    if (!this.active) return false;
    if (!input || input.length === 0) return true;
    const ch = input[0];
    const n = ch.length;
    for (let i = 0; i < n; i++) {
      let v = ch[i];
      if (input.length > 1) v = 0.5 * (v + input[1][i]); // the fake device reports two channels
      if (this.ratio <= 1) { this.emit(v); continue; }
      this.acc += v;
      this.count++;
      this.pos += 1;
      if (this.pos >= this.ratio) {
        this.emit(this.acc / this.count);
        this.acc = 0;
        this.count = 0;
        this.pos -= this.ratio;
      }
    }
    return true;
  }
}
registerProcessor("capture-processor", CaptureProcessor);
