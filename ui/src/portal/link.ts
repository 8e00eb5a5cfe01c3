/**
 * What a portal link's fragment carries (decision 43): `token` (the one-time token) and the
 * theming, `name`, `accent` and `theme`, which the server's settings put there and a platform
 * may append to (a later value wins). Each is checked here: a value that is not what it must
 * be is ignored, never passed on to CSS or markup.
 */

export interface Theming {
  /** The product the portal is part of, shown as text. */
  name: string;
  /** `#rrggbb`, or null for the stylesheet's own. */
  accent: string | null;
  theme: "light" | "dark";
}

export interface PortalLink {
  token: string | null;
  theming: Theming;
}

const defaultName = "Webhooks";

function lastValid<T>(values: readonly string[], parse: (value: string) => T | null): T | null {
  for (const value of [...values].reverse()) {
    const parsed = parse(value);
    if (parsed !== null) return parsed;
  }
  return null;
}

function parseAccent(value: string): string | null {
  const match = /^#?([0-9a-fA-F]{6})$/.exec(value.trim());
  return match?.[1] === undefined ? null : `#${match[1].toLowerCase()}`;
}

function parseTheme(value: string): "light" | "dark" | null {
  return value === "light" || value === "dark" ? value : null;
}

function parseName(value: string): string | null {
  const name = value.trim();
  // eslint-disable-next-line no-control-regex -- control characters are what it refuses
  return name.length >= 1 && name.length <= 60 && !/[\u0000-\u001f\u007f-\u009f]/.test(name)
    ? name
    : null;
}

export function readPortalLink(hash: string): PortalLink {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const token = params.get("token");
  return {
    token: token !== null && /^spl_[A-Za-z0-9_-]{1,96}$/.test(token) ? token : null,
    theming: {
      name: lastValid(params.getAll("name"), parseName) ?? defaultName,
      accent: lastValid(params.getAll("accent"), parseAccent),
      theme: lastValid(params.getAll("theme"), parseTheme) ?? "light",
    },
  };
}

/** The channels of `#rrggbb`, 0–255. */
function channelsOf(hex: string): [number, number, number] {
  return [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16)) as [number, number, number];
}

function hexOf(channels: readonly number[]): string {
  return `#${channels.map((value) => Math.round(value).toString(16).padStart(2, "0")).join("")}`;
}

/** WCAG's relative luminance of `#rrggbb`. */
function luminance(hex: string): number {
  const [r, g, b] = channelsOf(hex).map((value) => {
    const channel = value / 255;
    return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** The page's background in each theme (styles.css). */
const backgrounds = { light: "#ffffff", dark: "#15191e" } as const;

/**
 * The accent as links and outlines use it on the theme's background: the platform's colour,
 * mixed toward white (dark theme) or black (light) just enough to read at WCAG AA's 4.5:1.
 */
function readableAccent(accent: string, theme: "light" | "dark"): string {
  const background = backgrounds[theme];
  const toward = theme === "dark" ? 255 : 0;
  for (let step = 0; step <= 20; step += 1) {
    const mixed = hexOf(channelsOf(accent).map((value) => value + ((toward - value) * step) / 20));
    if (contrast(mixed, background) >= 4.5) return mixed;
  }
  return theme === "dark" ? "#ffffff" : "#000000";
}

/** White or near-black, whichever reads better on `accent` (for the text of its buttons). */
function textOn(accent: string): string {
  return contrast(accent, "#ffffff") >= contrast(accent, "#111111") ? "#ffffff" : "#111111";
}

/**
 * Applies the theming to the page: an attribute the stylesheet reads, and custom properties set
 * through the CSSOM (which the CSP's `style-src 'self'` allows, unlike a `style` attribute in
 * markup), with values checked above.
 */
export function applyTheming(theming: Theming, root: HTMLElement = document.documentElement): void {
  root.dataset.theme = theming.theme;
  if (theming.accent !== null) {
    const accent = readableAccent(theming.accent, theming.theme);
    root.style.setProperty("--accent", accent);
    root.style.setProperty("--accent-text", textOn(accent));
  }
  document.title = theming.name;
}
