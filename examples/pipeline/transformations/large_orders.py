"""A materialized view of the CRM's large orders: the filter and the columns are pushed into SQLite."""

from pyspark import pipelines as dp
from pyspark.sql import DataFrame, SparkSession

spark: SparkSession  # set by spark-pipelines when it loads this file


@dp.materialized_view
def large_orders() -> DataFrame:
    return spark.table("crm.main.orders").where("amount > 500").select("id", "customer_id", "status", "amount", "day")
