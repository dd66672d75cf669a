-- A materialized view computed from the CRM's customers: the GROUP BY is pushed into SQLite.
CREATE MATERIALIZED VIEW customers_by_country AS
SELECT country, count(*) AS customers, avg(score) AS avg_score
FROM crm.main.customers
GROUP BY country
