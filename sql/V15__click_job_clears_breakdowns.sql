-- A click job that starts without state recounts the open day and may keep other values in a full
-- breakdown than its earlier run did; it clears the breakdown's other rows before writing it whole.
GRANT DELETE ON click_dimensions_hourly, click_dimensions_daily TO tally_click_job;
