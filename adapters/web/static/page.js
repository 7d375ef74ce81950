// What the chat page and the memory inspector share: finding an element by id, and what this
// browser remembers between visits (the persona and the name last used, so the inspector opens
// on the conversation the chat page left off at).

export const $ = (id) => document.getElementById(id);

export const STORE_PERSONA = "kizuna.persona";
export const STORE_USER = "kizuna.user";

export function store(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    // private mode: nothing remembered, nothing broken
  }
}

export function stored(key) {
  try {
    return localStorage.getItem(key) || "";
  } catch {
    return "";
  }
}
