import { readExportOptions } from '../../app-core/index.js';
import { PasskeyFunctions } from './passkey-functions.js';

describe('PasskeyFunctions registration', () => {
  const options = (method: keyof PasskeyFunctions) => readExportOptions(PasskeyFunctions.prototype[method]);

  it('opens the two login steps to anyone and ignores a stale cookie or token sent with them', () => {
    for (const method of ['passkeyLoginStart', 'passkeyLoginFinish'] as const)
      expect(options(method)).toMatchObject({ modName: 'CloudM.Auth', level: 0, ignoreCredentials: true });
  });

  it('keeps registration, listing and removal behind a session', () => {
    for (const method of ['passkeyRegisterStart', 'passkeyRegisterFinish', 'listPasskeys', 'deletePasskey'] as const)
      expect(options(method)).toMatchObject({ level: 1, ignoreCredentials: false });
  });
});
