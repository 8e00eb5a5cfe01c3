import { render } from "preact";
import { applyTheming, readPortalLink } from "./portal/link.ts";
import { PortalApp } from "./portal/portal-app.tsx";
import "./styles.css";

// The link's one-time token leaves the address bar before anything else happens (decision 43):
// replaced, not pushed, so that neither Back, the history, a bookmark nor a shared address
// holds it. It was never sent anywhere: a fragment is not part of a request, nor of a Referer.
const link = readPortalLink(window.location.hash);
history.replaceState(null, "", window.location.pathname);
applyTheming(link.theming);

const root = document.getElementById("app");
if (root !== null) render(<PortalApp token={link.token} theming={link.theming} />, root);
