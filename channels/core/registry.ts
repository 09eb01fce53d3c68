import type { Routing } from "../../src/results/types.js";
import { ROUTING_CHANNELS } from "../../src/schemas/user-data.js";
import type { ChannelConfig, ChannelProvider } from "./provider.js";
import { type Adapter, PermanentJobError } from "./types.js";

/** The providers whose credentials are set. */
export function configuredProviders(providers: readonly ChannelProvider[], config: ChannelConfig) {
  return providers.filter((p) => p.configured(config));
}

/** Channels run when any provider's credentials are set (each provider only when its own are). */
export function anyChannelConfigured(providers: readonly ChannelProvider[], config: ChannelConfig): boolean {
  return configuredProviders(providers, config).length > 0;
}

/** The configured provider that sends a routed result on its routing channel (the most preferred one). */
export function routeFor(
  routing: Pick<Routing, "channel">,
  providers: readonly ChannelProvider[],
  config: ChannelConfig,
): { provider: ChannelProvider; channel: string; preference: number } | undefined {
  let best: { provider: ChannelProvider; channel: string; preference: number } | undefined;
  for (const provider of configuredProviders(providers, config)) {
    const route = provider.routes[routing.channel];
    if (!route || !provider.canRoute(routing.channel, config)) continue;
    if (!best || route.preference > best.preference)
      best = { provider, channel: route.channel, preference: route.preference };
  }
  return best;
}

/** Where a routed result goes: the provider, its channel and the farmer's address there (if the routing has it). */
export function destinationOf(
  routing: Routing,
  providers: readonly ChannelProvider[],
  config: ChannelConfig,
): { provider: string; channel: string; to: string | undefined } | undefined {
  const found = routeFor(routing, providers, config);
  if (!found) return undefined;
  const to = found.provider.routes[routing.channel]?.address(routing);
  return { provider: found.provider.id, channel: found.channel, to };
}

/**
 * The routing channels a REST result can be sent on: a routed result has no number the farmer wrote to,
 * so a provider may need its configured sender for the channel.
 */
export function deliverableChannels(
  providers: readonly ChannelProvider[],
  config: ChannelConfig,
): Set<Routing["channel"]> {
  const channels = new Set<Routing["channel"]>();
  for (const channel of ROUTING_CHANNELS) if (routeFor({ channel }, providers, config)) channels.add(channel);
  return channels;
}

/** Whose result a routed one is: the farmer key of the routing's address, as the providers key farmers. */
export function routingOwner(
  providers: readonly ChannelProvider[],
): (routing: Routing) => string | undefined {
  return (routing) => {
    for (const provider of providers) {
      const address = provider.routes[routing.channel]?.address(routing);
      if (address) return provider.farmerKey(address);
    }
    return undefined;
  };
}

/** The farmer key of an address at a provider (ChannelProvider.farmerKey). */
export function farmerKeys(
  providers: readonly ChannelProvider[],
): (provider: string, address: string) => string {
  return (provider, address) => providers.find((p) => p.id === provider)?.farmerKey(address) ?? address;
}

/** One adapter per configured provider, each pointed at its API root. */
export function createAdapters(
  providers: readonly ChannelProvider[],
  config: ChannelConfig,
  apiRoots: Record<string, string | undefined> = {},
): Map<string, Adapter> {
  return new Map(
    configuredProviders(providers, config).map((p) => [
      p.id,
      p.createAdapter(config, apiRoots[p.id] ?? p.apiRoot.default(config)),
    ]),
  );
}

export function adapterFor(adapters: ReadonlyMap<string, Adapter>, provider: string): Adapter {
  const adapter = adapters.get(provider);
  if (!adapter) throw new PermanentJobError(`no ${provider} adapter configured in this worker`);
  return adapter;
}
