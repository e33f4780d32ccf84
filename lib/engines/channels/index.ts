// The image channels engine's front door: what adapters import of it (.dependency-cruiser.cjs through-the-front-door).
export { ChannelPins } from './channel-pins';
export { FileChannelStore } from './channel-store';
export type { ChannelStore } from './channel-store';
export { channelWaves, formatChannelWaves } from './channel-waves';
export type { RefreshReport } from './channel-pins';
export { validateChannelObject } from './channel-store';
