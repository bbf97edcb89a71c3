import { applyWakeWord, takeSentences } from './voice-text.js';

describe('applyWakeWord', () => {
  const words = ['Hey Toolbox', 'computer'];

  it('passes text unchanged when disabled or without words', () => {
    expect(applyWakeWord('hello', { enabled: false, words, mode: 'pre' })).toBe('hello');
    expect(applyWakeWord('hello', { enabled: true, words: [], mode: 'pre' })).toBe('hello');
  });

  it('pre: takes the text after a wake word said first', () => {
    expect(applyWakeWord('hey toolbox, what time is it', { enabled: true, words, mode: 'pre' })).toBe(
      'what time is it',
    );
    expect(applyWakeWord('so... computer tell me', { enabled: true, words, mode: 'pre' })).toBe('tell me');
    expect(applyWakeWord('what time is it, hey toolbox', { enabled: true, words, mode: 'pre' })).toBeNull();
  });

  it('post: takes the text before the wake word', () => {
    expect(applyWakeWord('turn on the light computer', { enabled: true, words, mode: 'post' })).toBe(
      'turn on the light',
    );
  });

  it('mid: removes the wake word', () => {
    expect(applyWakeWord('turn   Computer on the light', { enabled: true, words, mode: 'mid' })).toBe(
      'turn on the light',
    );
  });

  it('answers null when no wake word was said', () => {
    expect(applyWakeWord('just talking', { enabled: true, words, mode: 'mid' })).toBeNull();
  });
});

describe('takeSentences', () => {
  it('returns complete sentences and keeps the rest for later', () => {
    expect(takeSentences('Hello there. How are')).toEqual({ sentences: ['Hello there.'], rest: 'How are' });
    expect(takeSentences('One! Two?! Three. ')).toEqual({ sentences: ['One!', 'Two?!', 'Three.'], rest: '' });
    expect(takeSentences('3.14 is pi')).toEqual({ sentences: [], rest: '3.14 is pi' });
    expect(takeSentences('')).toEqual({ sentences: [], rest: '' });
  });
});
