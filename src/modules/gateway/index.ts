export { GatewayModule } from './gateway.module.js';
export { GatewaySettingsService } from './gateway-settings.service.js';
export { ROUTED_FROM_HEADER } from './openai.controller.js';
export type { GatewaySettings } from './gateway-settings.js';
export { gatewayBodyLimits } from './gateway-body-limits.js';
