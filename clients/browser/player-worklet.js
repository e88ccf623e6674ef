// Reply playback: PCM16 chunks of one turn into a jitter buffer, played at the context rate (the
// session's output rate). Playback of a turn starts once `prebufferMs` is queued (or the turn's audio
// has ended); `clear` drops everything at once. Reports the turn and its position every `reportMs`: ms of
// the turn's reply audio played, on the turn's timeline. `pause` (playback.pause) stops the turn at once,
// drops its buffer and puts it at the server's `playedMs`; audio that follows resumes it from there (and
// the turn's `end` comes again), so the positions reported count on from `playedMs`.
class PlayerProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const opts = options.processorOptions || {};
    this.prebuffer = Math.round(sampleRate * (opts.prebufferMs || 80) / 1000);
    this.reportEvery = Math.round(sampleRate * (opts.reportMs || 150) / 1000);
    this.chunks = [];
    this.offset = 0; // read position in chunks[0]
    this.queued = 0;
    this.turn = null;
    this.latest = null; // the latest started turn: the only one a pause can name
    this.ended = false;
    this.playing = false;
    this.played = 0;
    this.sinceReport = 0;
    this.port.onmessage = (e) => this.onMessage(e.data);
  }

  onMessage(msg) {
    if (msg.type === "start") {
      this.reset();
      this.turn = this.latest = msg.turn;
    } else if (msg.type === "pause") {
      const applied = msg.turn === this.latest;
      if (applied) {
        this.reset(); // even after the turn played to its end here: the resume continues it
        this.turn = msg.turn;
        this.played = Math.round((Math.max(0, msg.playedMs) * sampleRate) / 1000);
      }
      this.port.postMessage({ type: "paused", turn: msg.turn, applied, playedMs: (this.played * 1000) / sampleRate });
    } else if (msg.type === "audio" && msg.turn === this.turn) {
      const pcm = new Int16Array(msg.pcm);
      const f = new Float32Array(pcm.length);
      for (let i = 0; i < pcm.length; i++) f[i] = pcm[i] / 32768;
      this.chunks.push(f);
      this.queued += f.length;
    } else if (msg.type === "end" && msg.turn === this.turn) {
      this.ended = true;
    } else if (msg.type === "clear") {
      this.reset();
    }
  }

  reset() {
    this.chunks = [];
    this.offset = 0;
    this.queued = 0;
    this.turn = null;
    this.ended = false;
    this.playing = false;
    this.played = 0;
    this.sinceReport = 0;
  }

  report(done) {
    this.port.postMessage({ type: done ? "done" : "mark", turn: this.turn, playedMs: (this.played * 1000) / sampleRate });
    this.sinceReport = 0;
  }

  process(_inputs, outputs) {
    const out = outputs[0][0];
    out.fill(0);
    if (this.turn === null) return true;
    if (!this.playing) {
      if (this.queued >= this.prebuffer || (this.ended && this.queued > 0)) {
        this.playing = true;
        this.port.postMessage({ type: "playing", turn: this.turn });
      } else {
        return true;
      }
    }
    let i = 0;
    while (i < out.length && this.chunks.length) {
      const head = this.chunks[0];
      const take = Math.min(out.length - i, head.length - this.offset);
      out.set(head.subarray(this.offset, this.offset + take), i);
      i += take;
      this.offset += take;
      if (this.offset >= head.length) { this.chunks.shift(); this.offset = 0; }
    }
    this.queued -= i;
    this.played += i;
    this.sinceReport += i;
    if (this.queued === 0) {
      if (this.ended) { this.report(true); this.reset(); return true; }
      this.playing = false; // underrun: wait for the buffer to refill
    }
    if (this.sinceReport >= this.reportEvery) this.report(false);
    for (let c = 1; c < outputs[0].length; c++) outputs[0][c].set(out);
    return true;
  }
}
registerProcessor("player-processor", PlayerProcessor);
