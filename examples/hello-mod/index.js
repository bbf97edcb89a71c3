// A sample Toolbox mod in plain JavaScript. Plain JS has no decorators, so the class declares its
// functions with the decorator-free form: `static modName` names the module (like @Mod) and
// `static exports` maps method names to @Export options. See docs/mods.md.

export class HelloMod {
  static modName = 'hello';

  static exports = {
    greet: { api: true, helper: 'says hello to someone', samples: [{ kwargs: { name: 'Ada' } }] },
    add: { api: true, helper: 'adds two numbers', samples: [{ args: [2, 3] }] },
    platform: { helper: 'the platform version, asked through the core' },
    started: { initial: true, test: false },
  };

  /** @param {{ app: object, manifest: object, directory: string, logger: { log(message: string): void } }} context */
  constructor(context) {
    this.context = context;
    this.startCount = 0;
  }

  greet(name = 'World') {
    return `Hello, ${name}!`;
  }

  add(a, b) {
    if (typeof a !== 'number' || typeof b !== 'number') throw new TypeError('add takes two numbers');
    return a + b;
  }

  async platform() {
    const version = await this.context.app.aRunAny('core.version');
    return { mod: `${this.context.manifest.name}@${this.context.manifest.version}`, platform: version.version };
  }

  started() {
    this.startCount += 1;
    this.context.logger.log(`hello-mod started (${this.startCount})`);
  }
}
