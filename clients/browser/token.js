// The access token, for a server with auth on (AGENT_AUTH__SECRET set; see docs/security.md).
// The user pastes it (e.g. from `python -m agent --print-token`, or the operator's own backend hands it out);
// it lives in sessionStorage for this tab only and travels inside the JSON messages, never in a URL.
const KEY = "voice-agent.token";

export function getToken() {
  return (sessionStorage.getItem(KEY) || "").trim();
}

// The message with a "token" field added when the user gave one.
export function withToken(message) {
  const token = getToken();
  return token ? { ...message, token } : message;
}

export function setUpToken(input, onChange) {
  input.value = getToken();
  input.addEventListener("change", () => {
    const value = input.value.trim();
    if (value) sessionStorage.setItem(KEY, value);
    else sessionStorage.removeItem(KEY);
    onChange();
  });
}
