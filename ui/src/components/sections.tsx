import { DeliveriesPage } from "../pages/deliveries.tsx";
import { DeliveryPage } from "../pages/delivery.tsx";
import { DestinationPage } from "../pages/destination.tsx";
import { DestinationsPage } from "../pages/destinations.tsx";
import { EventPage } from "../pages/event.tsx";
import { EventsPage } from "../pages/events.tsx";
import { href, type Route } from "../routes.ts";
import type { WorkspaceAccess } from "../types.ts";

/**
 * What the dashboard and the customer portal (decision 43) both show of a workspace: its
 * sections' navigation and the page of the route.
 */

type Section = "destinations" | "deliveries" | "events";

const sections: readonly { section: Section; label: string }[] = [
  { section: "destinations", label: "Destinations" },
  { section: "deliveries", label: "Deliveries" },
  { section: "events", label: "Events" },
];

export function SectionNav({ route, workspaceId }: { route: Route; workspaceId: string }) {
  return (
    <nav aria-label="Sections">
      {sections.map(({ section, label }) => (
        <a
          key={section}
          href={href({ page: section, workspace: workspaceId })}
          aria-current={sectionOf(route) === section ? "page" : undefined}
        >
          {label}
        </a>
      ))}
    </nav>
  );
}

function sectionOf(route: Route): Section {
  switch (route.page) {
    case "events":
    case "event":
      return "events";
    case "deliveries":
    case "delivery":
      return "deliveries";
    case "home":
    case "destinations":
    case "destination":
      return "destinations";
  }
}

export function Page({ route, workspace }: { route: Route; workspace: WorkspaceAccess }) {
  switch (route.page) {
    case "home":
    case "destinations":
      return <DestinationsPage workspace={workspace} />;
    case "destination":
      return <DestinationPage workspace={workspace} id={route.id} filters={route.filters ?? {}} />;
    case "events":
      return <EventsPage workspace={workspace} filters={route.filters ?? {}} />;
    case "event":
      return <EventPage workspace={workspace} id={route.id} />;
    case "deliveries":
      return <DeliveriesPage workspace={workspace} filters={route.filters ?? {}} />;
    case "delivery":
      return <DeliveryPage workspace={workspace} id={route.id} />;
  }
}
