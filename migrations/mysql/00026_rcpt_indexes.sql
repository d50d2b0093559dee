-- +goose Up
-- rcpt is read by message id only (the message API, documents, reindex): who sent or
-- received a message is asked of address_role (docs/address-rule.md). Its indexes by
-- recipient and recipient domain were written on every import and read by nothing.
DROP INDEX rcpt_to ON rcpt;
DROP INDEX rcpt_todomain ON rcpt;

-- +goose Down
CREATE INDEX rcpt_to ON rcpt (`to`, id);
CREATE INDEX rcpt_todomain ON rcpt (todomain, id);
