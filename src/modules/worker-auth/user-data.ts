import { PlatformError } from '../../common/errors.js';

/** The part of a user record its owner may change through the web client. */
export interface EditableUserData {
  username: string;
  settings: Record<string, unknown>;
  modData: Record<string, unknown>;
}

export interface UserDataChanges {
  settings?: unknown;
  modData?: unknown;
  username?: unknown;
}

/**
 * Names a person may give themselves: letters, digits, spaces and `._-`, 1 to 64 characters. The original web
 * client renders the username as HTML, so markup characters are never stored.
 */
const USERNAME = /^[\p{L}\p{N}][\p{L}\p{N} ._-]{0,63}$/u;

function plainObject(value: unknown, field: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new PlatformError('BAD_REQUEST', `${field} must be a JSON object`, [
      { field, message: 'must be a JSON object' },
    ]);
  return value as Record<string, unknown>;
}

function capped(value: Record<string, unknown>, field: string, maxBytes: number): Record<string, unknown> {
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > maxBytes)
    throw new PlatformError('PAYLOAD_TOO_LARGE', `${field} would be ${bytes} bytes as JSON; the limit is ${maxBytes}`, [
      { field, message: `at most ${maxBytes} bytes as JSON` },
    ]);
  return value;
}

/**
 * The record after an owner's update: `settings` and `mod_data` merged key by key into what is stored (the
 * original's shallow merge: a module sends its own key and keeps the others), each capped at `maxBytes` as JSON;
 * a new username replaces the old one and clears `settings.anonymous`. Nothing else is writable.
 */
export function mergeUserData(current: EditableUserData, changes: UserDataChanges, maxBytes: number): EditableUserData {
  let { username, settings, modData } = current;
  if (changes.settings !== undefined)
    settings = capped({ ...settings, ...plainObject(changes.settings, 'settings') }, 'settings', maxBytes);
  if (changes.modData !== undefined)
    modData = capped({ ...modData, ...plainObject(changes.modData, 'mod_data') }, 'mod_data', maxBytes);
  if (changes.username !== undefined) {
    const name = typeof changes.username === 'string' ? changes.username.trim() : '';
    if (!USERNAME.test(name))
      throw new PlatformError('BAD_REQUEST', 'username must be 1 to 64 letters, digits, spaces or ._-', [
        { field: 'username', message: 'letters, digits, spaces and ._- only' },
      ]);
    username = name;
    settings = { ...settings, anonymous: false };
  }
  return { username, settings, modData };
}
