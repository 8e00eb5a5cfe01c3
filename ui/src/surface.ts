import { createContext } from "preact";

/**
 * Which page a view is drawn in: the operator's dashboard, or a customer's portal (decision
 * 43), where the command line, keys and scopes mean nothing to the reader.
 */
export type Surface = "dashboard" | "portal";

export const SurfaceContext = createContext<Surface>("dashboard");
