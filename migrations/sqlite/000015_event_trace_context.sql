-- OpenTelemetry (issue 31, decision 47): the W3C `traceparent` of the span that published the
-- event, so that every attempt at its deliveries, made by whichever worker process, links to
-- it. Written only while tracing is on and the publish's span is sampled; NULL otherwise.
ALTER TABLE events ADD COLUMN traceparent TEXT;
