/** Pure text rules of the live-voice protocol (the original's): wake words and sentence splitting for TTS. */

export const WAKE_WORD_MODES = ['pre', 'post', 'mid'] as const;
export type WakeWordMode = (typeof WAKE_WORD_MODES)[number];

export interface WakeWordConfig {
  enabled: boolean;
  words: string[];
  mode: WakeWordMode;
}

/** A wake word counts as "said first" when it starts within this many characters. */
const PRE_WINDOW = 10;

/**
 * The text to answer, or null when the wake word was not said. Words are searched case-insensitively
 * in list order, the first found wins. `pre`: the word near the start, the text after it; `post`: the text
 * before it; `mid`: the text with the word removed. Disabled or no words: the text unchanged.
 */
export function applyWakeWord(text: string, config: WakeWordConfig): string | null {
  if (!config.enabled || config.words.length === 0) return text;
  const lower = text.toLowerCase();
  for (const word of config.words) {
    const at = lower.indexOf(word.toLowerCase());
    if (at < 0) continue;
    switch (config.mode) {
      case 'pre':
        return at < PRE_WINDOW
          ? text
              .slice(at + word.length)
              .replace(/^[\s,.!?:;]+/, '')
              .trim()
          : null;
      case 'post':
        return text.slice(0, at).trim();
      case 'mid':
        return `${text.slice(0, at)} ${text.slice(at + word.length)}`.replace(/\s+/g, ' ').trim();
    }
  }
  return null;
}

/**
 * Splits streamed text into the sentences that are complete (ended by ".", "!" or "?" and followed by
 * whitespace) and the rest, which waits for more text; each complete sentence can be synthesized at once.
 */
export function takeSentences(buffer: string): { sentences: string[]; rest: string } {
  const sentences: string[] = [];
  let start = 0;
  const boundary = /[.!?]+\s+/g;
  let match: RegExpExecArray | null;
  while ((match = boundary.exec(buffer)) !== null) {
    const sentence = buffer.slice(start, match.index + match[0].length).trim();
    if (sentence) sentences.push(sentence);
    start = match.index + match[0].length;
  }
  return { sentences, rest: buffer.slice(start) };
}
