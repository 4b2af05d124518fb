-- Every redirect-web replica keeps the set of existing codes in memory, so that an unknown code is
-- answered without a query. A replica learns of a link created, changed or removed through another
-- replica (or by hand) from this notification, whose payload is the code, within milliseconds of
-- the commit; it also reloads the whole set now and then, and whenever its listening connection
-- was lost, since notifications sent while it was away are gone.
CREATE FUNCTION notify_link_change() RETURNS trigger
    LANGUAGE plpgsql AS
$$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('link_changes', OLD.code);
    ELSE
        PERFORM pg_notify('link_changes', NEW.code);
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER links_notify_change
    AFTER INSERT OR UPDATE OF code, url, disabled_at OR DELETE ON links
    FOR EACH ROW EXECUTE FUNCTION notify_link_change();
