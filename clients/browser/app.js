// The voice agent page: one call over /ws (protocol v1), conversation view, latency waterfall, voices.
import { INPUT_RATE, Mic, OUTPUT_RATE, Player } from "./audio.js";
import { listVoices, setUpEnrollment, wsUrl } from "./enroll.js";
import { setUpToken, withToken } from "./token.js";

const $ = (id) => document.getElementById(id);
const STAGES = [
  ["endpoint", "End of turn", "endpoint_ms"],
  ["asr", "Recognition", "asr_ms"],
  ["llm", "Language model", "llm_first_text_ms"],
  ["tts", "Synthesis", "tts_first_audio_ms"],
];
const LABELS = { idle: "Ready", connecting: "Connecting…", listening: "Listening", hearing: "Hearing you",
  thinking: "Thinking…", speaking: "Speaking", paused: "Paused", error: "Error" };
const CAPABILITIES = ["playback.pause"]; // the agent pauses a reply the caller speaks over, then resumes or clears it
const LANGUAGE_KEY = "voice-agent.language"; // the caller's language choice, kept across visits (not a secret)

const state = { ws: null, mic: null, player: null, turns: new Map(), speakingTurn: null, audioTurn: null, marks: 0, language: "auto" };
window.voiceAgent = {
  get playedMs() { return state.player ? state.player.playedMs : 0; },
  get marksSent() { return state.marks; },
};

function setStatus(kind) {
  const el = $("status");
  el.dataset.state = kind;
  el.querySelector(".label").textContent = LABELS[kind] || kind;
}

function showError(text) {
  const el = $("error");
  el.hidden = !text;
  el.textContent = text || "";
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function turnView(turn) {
  let view = state.turns.get(turn);
  if (view) return view;
  const li = el("li", "turn");
  const you = el("div", "bubble you");
  const youWho = el("span", "who", "You");
  you.append(youWho);
  const transcript = el("span", "pending", "…");
  transcript.dataset.testid = "transcript";
  you.append(transcript);
  const agent = el("div", "bubble agent");
  const who = el("span", "who", "Agent");
  agent.append(who);
  const reply = el("span", "pending", "…");
  reply.dataset.testid = "reply";
  agent.append(reply);
  const metrics = el("div", "waterfall");
  metrics.dataset.testid = "metrics";
  li.append(you, agent, metrics);
  $("turns").prepend(li);
  view = { li, transcript, reply, who, youWho, metrics, text: "", pausedTag: null, languageTag: null };
  state.turns.set(turn, view);
  return view;
}

// The "paused" tag on a turn's reply, while the server holds it (playback.pause until the audio resumes).
function setPaused(view, paused) {
  if (paused && !view.pausedTag) {
    view.pausedTag = el("span", "tag", "paused");
    view.pausedTag.dataset.testid = "paused";
    view.who.append(view.pausedTag);
  } else if (!paused && view.pausedTag) {
    view.pausedTag.remove();
    view.pausedTag = null;
  }
}

// The language a turn was transcribed in (the detected one when the caller chose Automatic), as a small tag.
function setLanguage(view, code) {
  if (typeof code !== "string" || !code) return;
  if (!view.languageTag) {
    view.languageTag = el("span", "tag lang");
    view.languageTag.dataset.testid = "transcript-language";
    view.youWho.append(view.languageTag);
  }
  const name = languageName(code);
  view.languageTag.textContent = code.toUpperCase();
  view.languageTag.lang = code;
  view.languageTag.title = state.language === "auto" ? `${name} (detected)` : name;
}

// A language's own name, as the picker lists it ("de" -> "Deutsch"); a code it does not list, as is.
function languageName(code) {
  const option = [...$("language-select").options].find((o) => o.value === code);
  return option ? option.textContent : code;
}

function drawWaterfall(view, m) {
  const rows = [];
  let at = 0;
  for (const [key, label, field] of STAGES) {
    const ms = m[field];
    rows.push({ key, label, from: at, ms });
    if (typeof ms === "number") at += ms;
  }
  const total = m.voice_to_voice_ms;
  rows.push({ key: "v2v", label: "Voice to voice", from: 0, ms: total });
  const scale = Math.max(at, total || 0, 1);
  view.metrics.replaceChildren(el("div", "wf-title", `Latency · turn ${m.turn}${m.interrupted ? " · interrupted" : ""}`));
  for (const row of rows) {
    const line = el("div", "wf-row");
    const track = el("div", "wf-track");
    if (typeof row.ms === "number") {
      const bar = el("div", `wf-bar wf-${row.key}`);
      bar.style.left = `${(100 * row.from) / scale}%`;
      bar.style.width = `${(100 * row.ms) / scale}%`;
      track.append(bar);
    }
    line.append(el("span", "", row.label), track, el("span", "wf-ms", typeof row.ms === "number" ? `${Math.round(row.ms)} ms` : "—"));
    view.metrics.append(line);
  }
  if (m.speculative_asr) view.metrics.append(el("div", "small muted", "Transcript taken during the pause (speculative)."));
}

function onEvent(msg) {
  switch (msg.type) {
    case "session.started":
      setStatus("listening");
      $("hint").textContent = `Connected — speak whenever you like. Voice: ${msg.voice}.`
        + (msg.language ? ` Language: ${msg.language === "auto" ? "automatic" : languageName(msg.language)}.` : "");
      break;
    case "speech.started":
      setStatus("hearing");
      break;
    case "speech.stopped":
      turnView(msg.turn);
      setStatus("thinking");
      break;
    case "transcript": {
      // The caller had only paused: this turn holds the words of turn `continues` too, and its reply was cut.
      const earlier = msg.continues !== undefined ? state.turns.get(msg.continues) : undefined;
      if (earlier) earlier.li.hidden = true;
      const view = turnView(msg.turn);
      view.transcript.className = "";
      view.transcript.textContent = msg.text || "(nothing understood)";
      setLanguage(view, msg.language);
      if (!msg.text) { view.reply.textContent = ""; view.reply.parentElement.hidden = true; setStatus("listening"); }
      break;
    }
    case "reply.delta": {
      const view = turnView(msg.turn);
      view.text += msg.text;
      view.reply.className = "";
      view.reply.textContent = view.text;
      break;
    }
    case "reply.done": {
      const view = turnView(msg.turn);
      view.reply.className = "";
      view.reply.textContent = msg.text;
      break;
    }
    case "audio.start":
      state.audioTurn = msg.turn;
      state.player.startTurn(msg.turn);
      break;
    case "audio.end":
      state.player.endTurn(msg.turn);
      break;
    case "playback.pause":
      if (msg.turn !== state.audioTurn) break; // only the turn whose audio is coming can be paused
      state.player.pause(msg.turn, msg.played_ms);
      state.speakingTurn = null;
      setPaused(turnView(msg.turn), true);
      setStatus("paused");
      break;
    case "playback.clear": {
      state.player.clear();
      state.audioTurn = null;
      const view = turnView(msg.turn);
      setPaused(view, false);
      view.who.append(el("span", "tag", "interrupted"));
      setStatus("hearing");
      break;
    }
    case "turn.metrics":
      drawWaterfall(turnView(msg.turn), msg);
      if (state.speakingTurn === null) setStatus("listening");
      break;
    case "error":
      showError(`${msg.message} (${msg.code})`);
      break;
    case "session.ended":
      $("hint").textContent = `Session ended: ${msg.reason}.`;
      break;
    default:
      break; // unknown types are ignored (protocol v1)
  }
}

function onPlayback(kind, turn, playedMs) {
  if (kind === "paused") return; // the server set the position itself
  if (kind === "playing") {
    const view = state.turns.get(turn);
    if (view) setPaused(view, false); // resumed after a pause
    state.speakingTurn = turn;
    setStatus("speaking");
    return;
  }
  if (state.ws && state.ws.readyState === WebSocket.OPEN) {
    state.ws.send(JSON.stringify({ type: "playback.mark", turn, played_ms: Math.round(playedMs) }));
    state.marks++;
  }
  if (kind === "done") { state.speakingTurn = null; setStatus("listening"); }
}

async function start() {
  showError("");
  $("start").disabled = true;
  setStatus("connecting");
  try {
    state.player = new Player(onPlayback);
    await state.player.start(OUTPUT_RATE);
    const ws = new WebSocket(wsUrl());
    ws.binaryType = "arraybuffer";
    state.ws = ws;
    await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = () => reject(new Error("cannot reach the server")); });
    ws.onmessage = (e) => {
      if (typeof e.data === "string") onEvent(JSON.parse(e.data));
      else if (state.audioTurn !== null) state.player.push(state.audioTurn, e.data);
    };
    ws.onclose = (e) => { if (state.ws === ws) stop(e.code === 1000 ? "" : `Disconnected (${e.code}${e.reason ? `: ${e.reason}` : ""}).`); };
    const voice = $("voice-select").value || null;
    const language = $("language-select").value || "auto";
    state.language = language;
    const begin = { type: "session.start", sample_rate: INPUT_RATE, output_sample_rate: OUTPUT_RATE, voice, language, capabilities: CAPABILITIES };
    ws.send(JSON.stringify(withToken(begin)));
    state.mic = new Mic((buf) => { if (ws.readyState === WebSocket.OPEN) ws.send(buf); }, {
      rate: INPUT_RATE, onLevel: (v) => { $("level").style.width = `${Math.round(v * 100)}%`; },
    });
    await state.mic.start();
    $("stop").disabled = false;
    $("voice-select").disabled = true;
    $("language-select").disabled = true;
  } catch (err) {
    await stop(`Could not start: ${err.message}`);
  }
}

async function stop(error) {
  const { ws, mic, player } = state;
  state.ws = state.mic = null;
  if (ws && ws.readyState === WebSocket.OPEN) { ws.send(JSON.stringify({ type: "session.end" })); ws.close(1000); }
  if (mic) await mic.stop();
  if (player) await player.stop();
  state.speakingTurn = state.audioTurn = null;
  $("level").style.width = "0";
  $("start").disabled = false;
  $("stop").disabled = true;
  $("voice-select").disabled = false;
  $("language-select").disabled = false;
  setStatus(error ? "error" : "idle");
  showError(typeof error === "string" ? error : "");
}

async function refreshVoices(select) {
  const list = $("voice-list");
  const pick = $("voice-select");
  try {
    const voices = await listVoices();
    const keep = select ?? pick.value;
    pick.replaceChildren(new Option("Server default", ""));
    list.replaceChildren();
    for (const v of voices) {
      pick.append(new Option(v.name, v.name));
      const li = el("li");
      li.append(el("span", "", v.name), el("span", "muted", `${v.language} · ${Number(v.duration_s).toFixed(1)} s`));
      list.append(li);
    }
    if (!voices.length) list.append(el("li", "muted", "No cloned voices yet — add one above."));
    pick.value = [...pick.options].some((o) => o.value === keep) ? keep : "";
  } catch (err) {
    list.replaceChildren(el("li", "muted", `Voices unavailable: ${err.message}`));
  }
}

// The language picker starts on the caller's last choice; storage may be off (private windows, policies).
function setUpLanguage(pick) {
  let kept = null;
  try { kept = localStorage.getItem(LANGUAGE_KEY); } catch { /* not remembered */ }
  if (kept && [...pick.options].some((o) => o.value === kept)) pick.value = kept;
  pick.addEventListener("change", () => {
    try { localStorage.setItem(LANGUAGE_KEY, pick.value); } catch { /* not remembered */ }
  });
}

$("start").addEventListener("click", start);
$("stop").addEventListener("click", () => stop(""));
$("refresh-voices").addEventListener("click", () => refreshVoices());
setUpLanguage($("language-select"));
setUpToken($("token"), () => refreshVoices());
setUpEnrollment($, (name) => refreshVoices(name));
refreshVoices();
