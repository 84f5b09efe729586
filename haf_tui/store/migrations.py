"""The DuckDB schema, as versioned migrations applied in order.

Never edit a released migration: add the next one. ``schema_migrations`` records what ran;
a database whose version is newer than :data:`LATEST_VERSION` is refused (an older haf-tui
must not write into a newer schema).
"""

from __future__ import annotations

MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "runs, datasets, instances, generations, tokens, reasons, metrics, diagnostics",
        """
        CREATE TABLE datasets (
            dataset_id   VARCHAR PRIMARY KEY,
            name         VARCHAR NOT NULL,
            source       VARCHAR NOT NULL,
            created_at   TIMESTAMP NOT NULL DEFAULT current_timestamp,
            n_instances  INTEGER NOT NULL,
            meta         JSON
        );
        CREATE TABLE instances (
            dataset_id   VARCHAR NOT NULL,
            instance_id  VARCHAR NOT NULL,
            position     INTEGER NOT NULL,
            text         VARCHAR NOT NULL,
            label        VARCHAR,
            extra        JSON,
            PRIMARY KEY (dataset_id, instance_id)
        );
        CREATE TABLE runs (
            run_id            VARCHAR PRIMARY KEY,
            created_at        TIMESTAMP NOT NULL DEFAULT current_timestamp,
            updated_at        TIMESTAMP NOT NULL DEFAULT current_timestamp,
            status            VARCHAR NOT NULL,
            dataset_id        VARCHAR NOT NULL,
            n_planned         INTEGER NOT NULL,
            config            JSON NOT NULL,
            model_file        VARCHAR NOT NULL,
            model_size        BIGINT,
            model_sha256      VARCHAR,
            model_arch        VARCHAR,
            model_quant       VARCHAR,
            chat_format       VARCHAR,
            similarity_model  VARCHAR NOT NULL,
            similarity_kind   VARCHAR NOT NULL,
            offload_supported BOOLEAN,
            n_gpu_layers      INTEGER,
            versions          JSON,
            seconds_running   DOUBLE NOT NULL DEFAULT 0,
            error             VARCHAR
        );
        CREATE TABLE generations (
            run_id             VARCHAR NOT NULL,
            instance_id        VARCHAR NOT NULL,
            stage              VARCHAR NOT NULL,
            sub_index          INTEGER NOT NULL,
            test               VARCHAR,
            seed               BIGINT NOT NULL,
            prompt_text        VARCHAR NOT NULL,
            prompt_tokens      INTEGER NOT NULL,
            output_text        VARCHAR NOT NULL,
            output_tokens      INTEGER NOT NULL,
            finish_reason      VARCHAR NOT NULL,
            decision           VARCHAR NOT NULL,
            decision_source    VARCHAR,
            decision_sentence  VARCHAR,
            decision_start     INTEGER,
            decision_end       INTEGER,
            decision_confidence DOUBLE,
            seconds            DOUBLE NOT NULL,
            created_at         TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (run_id, instance_id, stage, sub_index)
        );
        CREATE TABLE tokens (
            run_id       VARCHAR NOT NULL,
            instance_id  VARCHAR NOT NULL,
            stage        VARCHAR NOT NULL,
            sub_index    INTEGER NOT NULL,
            position     INTEGER NOT NULL,
            token_id     INTEGER NOT NULL,
            piece        BLOB NOT NULL,
            text         VARCHAR NOT NULL,
            byte_offset  INTEGER NOT NULL,
            char_offset  INTEGER NOT NULL,
            logprob      DOUBLE NOT NULL,
            top_ids      INTEGER[],
            top_logprobs DOUBLE[],
            PRIMARY KEY (run_id, instance_id, stage, sub_index, position)
        );
        CREATE TABLE reasons (
            run_id        VARCHAR NOT NULL,
            instance_id   VARCHAR NOT NULL,
            stage         VARCHAR NOT NULL,
            sub_index     INTEGER NOT NULL,
            reason_index  INTEGER NOT NULL,
            text          VARCHAR NOT NULL,
            span_start    INTEGER NOT NULL,
            span_end      INTEGER NOT NULL,
            token_first   INTEGER,
            token_count   INTEGER NOT NULL,
            nll           DOUBLE[],
            relevance     DOUBLE[],
            confidence    DOUBLE,
            PRIMARY KEY (run_id, instance_id, stage, sub_index, reason_index)
        );
        CREATE TABLE instance_results (
            run_id       VARCHAR NOT NULL,
            instance_id  VARCHAR NOT NULL,
            stance       VARCHAR NOT NULL,
            n_reasons    INTEGER NOT NULL,
            stopped      VARCHAR,
            created_at   TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (run_id, instance_id)
        );
        CREATE TABLE reason_metrics (
            run_id        VARCHAR NOT NULL,
            instance_id   VARCHAR NOT NULL,
            stage         VARCHAR NOT NULL,
            sub_index     INTEGER NOT NULL,
            reason_index  INTEGER NOT NULL,
            metric        VARCHAR NOT NULL,
            value         DOUBLE,
            PRIMARY KEY (run_id, instance_id, stage, sub_index, reason_index, metric)
        );
        CREATE TABLE instance_metrics (
            run_id       VARCHAR NOT NULL,
            instance_id  VARCHAR NOT NULL,
            metric       VARCHAR NOT NULL,
            value        DOUBLE,
            n            INTEGER NOT NULL,
            PRIMARY KEY (run_id, instance_id, metric)
        );
        CREATE TABLE parse_diagnostics (
            run_id       VARCHAR NOT NULL,
            instance_id  VARCHAR NOT NULL,
            stage        VARCHAR NOT NULL,
            sub_index    INTEGER NOT NULL,
            kind         VARCHAR NOT NULL,
            detail       VARCHAR
        );
        """,
    ),
    (
        2,
        "tokens.top_texts: the text of each top-k alternative",
        "ALTER TABLE tokens ADD COLUMN top_texts VARCHAR[];",
    ),
    (
        3,
        "skipped_rows: every dataset row left out, with its reason (from meta.skipped)",
        """
        CREATE TABLE skipped_rows (
            dataset_id   VARCHAR NOT NULL,
            row_number   INTEGER NOT NULL,
            reason       VARCHAR NOT NULL,
            excerpt      VARCHAR,
            PRIMARY KEY (dataset_id, row_number)
        );
        INSERT OR IGNORE INTO skipped_rows
        SELECT dataset_id, CAST(s ->> '$[0]' AS INTEGER) + 1, s ->> '$[1]', s ->> '$[2]'
        FROM (
            SELECT dataset_id, unnest(json_extract(meta, '$.skipped[*]')) AS s
            FROM datasets
            WHERE json_type(meta, '$.skipped') = 'ARRAY'
        );
        """,
    ),
    (
        4,
        "runs.writer_pid, runs.writer_host: the process that runs it (a dead one: interrupted)",
        """
        ALTER TABLE runs ADD COLUMN writer_pid INTEGER;
        ALTER TABLE runs ADD COLUMN writer_host VARCHAR;
        """,
    ),
    (
        5,
        "instance_results.stance may be NULL: a run without the HAF suite decides no stance",
        "ALTER TABLE instance_results ALTER COLUMN stance DROP NOT NULL;",
    ),
    (
        6,
        "(a method's own table since: that method's migration 1 creates it, where a file that "
        "ran this step before lacks it)",
        "SELECT 1;",
    ),
    (
        7,
        "what researchers keep: runs.label and runs.tags (rename, tag), instance_notes (a note "
        "and a bookmark on an instance of a run)",
        """
        ALTER TABLE runs ADD COLUMN label VARCHAR;
        ALTER TABLE runs ADD COLUMN tags VARCHAR[];
        CREATE TABLE instance_notes (
            run_id       VARCHAR NOT NULL,
            instance_id  VARCHAR NOT NULL,
            note         VARCHAR,
            bookmarked   BOOLEAN NOT NULL DEFAULT false,
            updated_at   TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (run_id, instance_id)
        );
        """,
    ),
    (
        8,
        "each suite's settings under config.settings by suite name (methods as packages): "
        "HAF's prompting, stages, parse_rules and weights under settings.haf, the "
        "rationales and judge settings under settings.rationales and settings.judge",
        """
        UPDATE runs SET config = json_merge_patch(
            json_merge_patch(
                config,
                '{"prompting": null, "stages": null, "parse_rules": null, "weights": null,
                  "rationales": null, "judge": null}'
            ),
            json_object('settings', json_object(
                'haf', json_object(
                    'prompting', coalesce(json_extract(config, '$.prompting'), '"explicit"'),
                    'stages', coalesce(
                        json_extract(config, '$.stages'),
                        '["justify", "internal", "external", "individual"]'
                    ),
                    'parse_rules', coalesce(json_extract(config, '$.parse_rules'), '"reference"'),
                    'weights', coalesce(
                        json_extract(config, '$.weights'),
                        '{"sos_confidence": 0.8, "reliance_confidence": 0.5}'
                    )
                ),
                'rationales', coalesce(json_extract(config, '$.rationales'), '{}'),
                'judge', coalesce(json_extract(config, '$.judge'), '{}')
            ))
        )
        WHERE json_extract(config, '$.settings') IS NULL;
        """,
    ),
    (
        9,
        "method_migrations: which of each method's own migrations (its tables) ran",
        """
        CREATE TABLE method_migrations (
            method       VARCHAR NOT NULL,
            version      INTEGER NOT NULL,
            description  VARCHAR NOT NULL,
            applied_at   TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (method, version)
        );
        """,
    ),
    (
        10,
        "campaigns (haf campaign: a grid of models x datasets) and their cells: each cell's "
        "claimed run id (not named run_id: deleting a run leaves its cell's claim, and the "
        "campaign makes the run again under it) and the settings it was made with",
        """
        CREATE TABLE campaigns (
            name        VARCHAR PRIMARY KEY,
            grid_path   VARCHAR NOT NULL,
            created_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
        );
        CREATE TABLE campaign_cells (
            campaign       VARCHAR NOT NULL,
            model_label    VARCHAR NOT NULL,
            dataset_label  VARCHAR NOT NULL,
            claimed_run_id VARCHAR NOT NULL UNIQUE,
            fingerprint    VARCHAR NOT NULL,
            settings       JSON NOT NULL,
            position       INTEGER NOT NULL,
            claimed_at     TIMESTAMP NOT NULL DEFAULT current_timestamp,
            PRIMARY KEY (campaign, model_label, dataset_label)
        );
        """,
    ),
    (
        11,
        "derived runs (haf rescore): runs.parent_run_id, the run whose generations and tokens "
        "a re-scored run reads; a derived run's generations rows hold its own decision, "
        "confidence and counts but no prompt or output text (NULL: read the parent's)",
        """
        ALTER TABLE runs ADD COLUMN parent_run_id VARCHAR;
        ALTER TABLE generations ALTER COLUMN prompt_text DROP NOT NULL;
        ALTER TABLE generations ALTER COLUMN output_text DROP NOT NULL;
        """,
    ),
]

LATEST_VERSION = MIGRATIONS[-1][0]
