"""The decision record: per domain a shortlist size N, the managers' marks on ideas (take
forward, hold, reject; append-only versions with the board's figures kept), and the memo that
exports a domain's decision (docs/decide.md "Deciding")."""
