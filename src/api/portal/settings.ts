import type { ServerConfig } from "../../config/server-config.ts";

/** The customer portal's settings (decision 43), from the server's configuration. */
export interface PortalSettings {
  /** How long a link stays unopened by default (`portalLinkTtl`). */
  readonly linkTtlMs: number;
  /** How long a session lasts from the link's opening (`portalSessionTtl`). */
  readonly sessionTtlMs: number;
  /** Where browsers reach the server (`publicUrl`); null: the origin the request came to. */
  readonly publicUrl: string | null;
  /** The origins that may frame `/ui/portal` (`portalFrameAncestors`). */
  readonly frameAncestors: readonly string[];
  /**
   * The theming of the settings, as the link's fragment carries it (`name`, `accent`,
   * `theme`): the page reads it there, even when the link is dead, and a platform may append
   * its own after it, which wins.
   */
  readonly theming: Readonly<Record<string, string>>;
}

export function portalSettingsOf(
  config: Pick<
    ServerConfig,
    | "portalLinkTtl"
    | "portalSessionTtl"
    | "publicUrl"
    | "portalFrameAncestors"
    | "portalProductName"
    | "portalAccentColor"
    | "portalTheme"
  >,
): PortalSettings {
  const theming: Record<string, string> = {};
  if (config.portalProductName !== undefined) theming.name = config.portalProductName;
  if (config.portalAccentColor !== undefined) theming.accent = config.portalAccentColor;
  if (config.portalTheme !== "light") theming.theme = config.portalTheme;
  return {
    linkTtlMs: config.portalLinkTtl,
    sessionTtlMs: config.portalSessionTtl,
    publicUrl: config.publicUrl ?? null,
    frameAncestors: config.portalFrameAncestors,
    theming,
  };
}
