import { RANGES, type Filters } from "../routes.ts";
import { EVENT_TYPES } from "../types.ts";

const STATUSES = ["pending", "delivered", "failed"];

/**
 * A log's filters: status (deliveries only), type, and a time range back from now or between
 * two times. They live in the URL: each change goes to `onChange`, which sets the location,
 * so a reload or a shared link shows the same selection.
 */
export function LogFilters({
  filters,
  onChange,
  status,
  label,
}: {
  filters: Filters;
  onChange: (filters: Filters) => void;
  status: boolean;
  label: string;
}) {
  const custom = filters.range === undefined && (filters.since ?? filters.until) !== undefined;
  const rangeValue = custom ? "custom" : (filters.range ?? "");
  const set = (name: keyof Filters, value: string): void => {
    // An empty value drops the filter (an absent member is no filter).
    onChange({ ...filters, [name]: value === "" ? undefined : value });
  };
  const setRange = (value: string): void => {
    const next: Filters = { ...filters };
    delete next.range;
    delete next.since;
    delete next.until;
    if (value === "custom") next.since = new Date(Date.now() - 86_400_000).toISOString();
    else if (value !== "") next.range = value;
    onChange(next);
  };

  return (
    <form
      class="filters"
      aria-label={label}
      onSubmit={(event) => {
        event.preventDefault();
      }}
    >
      {status && (
        <FilterSelect
          name="status"
          label="Status"
          anyLabel="Any status"
          value={filters.status}
          options={STATUSES}
          onChange={set}
        />
      )}
      <FilterSelect
        name="type"
        label="Type"
        anyLabel="All types"
        value={filters.type}
        options={EVENT_TYPES}
        onChange={set}
      />
      <div>
        <label for="filter-range">Time</label>
        <select
          id="filter-range"
          value={rangeValue}
          onChange={(event) => {
            setRange(event.currentTarget.value);
          }}
        >
          <option value="">Any time</option>
          {RANGES.map((each) => (
            <option key={each.value} value={each.value}>
              {each.label}
            </option>
          ))}
          <option value="custom">Between…</option>
        </select>
      </div>
      {custom && (
        <>
          <TimeInput
            id="filter-since"
            label="From"
            iso={filters.since}
            onChange={(value) => {
              set("since", value);
            }}
          />
          <TimeInput
            id="filter-until"
            label="Until"
            iso={filters.until}
            onChange={(value) => {
              set("until", value);
            }}
          />
        </>
      )}
      {Object.keys(filters).length > 0 && (
        <button
          type="button"
          class="secondary"
          onClick={() => {
            onChange({});
          }}
        >
          Clear filters
        </button>
      )}
    </form>
  );
}

/** One filter chosen from a list, its empty choice meaning "any" (the filter dropped). */
function FilterSelect({
  name,
  label,
  anyLabel,
  value,
  options,
  onChange,
}: {
  name: "status" | "type";
  label: string;
  anyLabel: string;
  value: string | undefined;
  options: readonly string[];
  onChange: (name: "status" | "type", value: string) => void;
}) {
  return (
    <div>
      <label for={`filter-${name}`}>{label}</label>
      <select
        id={`filter-${name}`}
        value={value ?? ""}
        onChange={(event) => {
          onChange(name, event.currentTarget.value);
        }}
      >
        <option value="">{anyLabel}</option>
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A local date and time, kept in the URL as ISO 8601 (UTC). */
function TimeInput({
  id,
  label,
  iso,
  onChange,
}: {
  id: string;
  label: string;
  iso: string | undefined;
  onChange: (iso: string) => void;
}) {
  return (
    <div>
      <label for={id}>{label}</label>
      <input
        id={id}
        type="datetime-local"
        step={1}
        value={iso === undefined ? "" : toLocalInput(iso)}
        onChange={(event) => {
          const value = event.currentTarget.value;
          onChange(value === "" ? "" : new Date(value).toISOString());
        }}
      />
    </div>
  );
}

/** `2026-11-25T12:00:00` in the browser's zone, what a datetime-local input shows. */
function toLocalInput(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const pad = (value: number) => String(value).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}
