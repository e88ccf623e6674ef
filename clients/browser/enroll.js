// Voice list and enrollment over short-lived WebSockets (protocol v1 allows both before session.start).
import { Mic, wavFile } from "./audio.js";
import { withToken } from "./token.js";

const SENTENCES = [
  "On a bright spring morning, I walked along the river and listened to the birds singing in the tall trees.",
  "Please remember to water the plants on the balcony, and call me if the package arrives before noon.",
  "The little café on the corner serves the best hot chocolate in town, especially on cold winter evenings.",
];

export function wsUrl() {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
}

// Open a socket, run `talk(ws, next)` where `next()` resolves with the next JSON message, then close.
async function exchange(talk) {
  const ws = new WebSocket(wsUrl());
  const inbox = [];
  let waiter = null;
  let failure = null;
  const wake = () => { if (waiter) { const w = waiter; waiter = null; w(); } };
  ws.onmessage = (e) => { if (typeof e.data === "string") inbox.push(JSON.parse(e.data)); wake(); };
  ws.onclose = () => { failure = failure || new Error("the connection closed"); wake(); };
  ws.onerror = () => { failure = new Error("cannot reach the server"); wake(); };
  const next = async () => {
    while (!inbox.length) {
      if (failure) throw failure;
      await new Promise((r) => { waiter = r; });
    }
    return inbox.shift();
  };
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.addEventListener("error", () => reject(new Error("cannot reach the server")));
  });
  try { return await talk(ws, next); } finally { ws.close(); }
}

export async function listVoices() {
  return exchange(async (ws, next) => {
    ws.send(JSON.stringify(withToken({ type: "voices.list" })));
    const msg = await next();
    if (msg.type === "error") throw new Error(msg.message);
    return msg.voices || [];
  });
}

function b64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

export async function enrol({ name, consent, transcript, language, bytes }) {
  return exchange(async (ws, next) => {
    ws.send(JSON.stringify(withToken({ type: "voice.enroll.begin", name, consent, size: bytes.length, transcript, language })));
    const ready = await next();
    if (ready.type === "error") throw Object.assign(new Error(ready.message), { code: ready.code });
    const step = ready.max_chunk_bytes;
    for (let o = 0; o < bytes.length; o += step) {
      ws.send(JSON.stringify({ type: "voice.enroll.chunk", data: b64(bytes.subarray(o, o + step)) }));
    }
    ws.send(JSON.stringify({ type: "voice.enroll.end" }));
    const done = await next();
    if (done.type === "error") throw Object.assign(new Error(done.message), { code: done.code });
    return done;
  });
}

// The enrollment panel: sentence to read, consent, record or upload, result.
export function setUpEnrollment($, onEnrolled) {
  const sentence = SENTENCES[Math.floor(Math.random() * SENTENCES.length)];
  $("enroll-sentence").textContent = sentence;
  const consent = $("enroll-consent");
  const name = $("enroll-name");
  const fill = () => {
    consent.value = `I, ${name.value.trim() || "[your full name]"}, am the speaker in this recording and agree that my voice may be cloned and used by this voice agent.`;
  };
  fill();
  name.addEventListener("input", () => { if (!consent.dataset.edited) fill(); });
  consent.addEventListener("input", () => { consent.dataset.edited = "1"; });

  let recording = null;
  let recorded = null;
  let mic = null;
  const button = $("record");
  const timeLabel = $("record-time");
  button.addEventListener("click", async () => {
    if (mic) {
      const m = mic; mic = null;
      await m.stop();
      recorded = wavFile(recording.chunks, m.rate);
      timeLabel.textContent = `recorded ${(recording.samples / m.rate).toFixed(1)} s`;
      button.textContent = "● Record again";
      $("enroll-file").value = "";
      return;
    }
    recording = { chunks: [], samples: 0 };
    mic = new Mic((buf) => { recording.chunks.push(buf); recording.samples += buf.byteLength / 2; }, { rate: 0 });
    try {
      await mic.start();
    } catch (err) {
      mic = null;
      show(false, `Microphone unavailable: ${err.message}`);
      return;
    }
    button.textContent = "■ Stop recording";
    timeLabel.textContent = "recording…";
  });
  $("enroll-file").addEventListener("change", () => { recorded = null; timeLabel.textContent = "using the file"; });

  const result = $("enroll-result");
  const show = (ok, text) => { result.hidden = false; result.className = `result ${ok ? "ok" : "bad"}`; result.textContent = text; };
  $("enroll").addEventListener("click", async () => {
    const file = $("enroll-file").files[0];
    const bytes = file ? new Uint8Array(await file.arrayBuffer()) : recorded;
    if (!name.value.trim()) return show(false, "Give the voice a name (letters, digits, - or _).");
    if (!bytes) return show(false, "Record the sentence or choose a file first.");
    show(true, "Uploading and checking the recording…");
    try {
      const done = await enrol({
        name: name.value.trim(), consent: consent.value.trim(), language: $("enroll-language").value,
        transcript: file ? undefined : sentence, bytes,
      });
      const warn = (done.warnings || []).length ? ` Note: ${done.warnings.join(" ")}` : "";
      show(true, `Voice “${done.voice.name}” added (${done.voice.duration_s.toFixed(1)} s of speech).${warn}`);
      onEnrolled(done.voice.name);
    } catch (err) {
      show(false, err.code ? `${err.message} (${err.code})` : err.message);
    }
  });
}
