/**
 * When a chat platform's routes are on: once its secret is set and ACCESS_POLICY names at least
 * one of its users (no rule, no rights: a `*` rule alone never opens a chat route, nor grants a
 * chat user).
 */
import { accessPolicyOf } from '../access';
import type { Config } from '../settings';
import type { ChatPlatformKey } from './chatPlatform';

type ChatConfig = Pick<Config, 'ACCESS_POLICY' | ChatPlatformKey['secretSetting']>;

/** Asks the app's parsed policy, as the chat caller's match does, so a route is on only for callers a rule can match. */
export function chatEnabled(config: ChatConfig, platform: ChatPlatformKey): boolean {
  return config[platform.secretSetting] !== undefined && accessPolicyOf(config).namesKind(`${platform.name}:`);
}

/** What is missing for a platform's routes to be on. */
export function chatMissing(config: ChatConfig, platform: ChatPlatformKey): string[] {
  return [
    ...(config[platform.secretSetting] === undefined ? [`${platform.secretSetting} not set`] : []),
    ...(accessPolicyOf(config).namesKind(`${platform.name}:`) ? [] : [`no ACCESS_POLICY rule names a ${platform.name}: user`]),
  ];
}
