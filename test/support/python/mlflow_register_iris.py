"""Trains an iris classifier, logs it to an MLflow tracking server and registers it.

usage: MLFLOW_TRACKING_URI=http://127.0.0.1:PORT mlflow_register_iris.py --name NAME

Creates a run in a fresh experiment, logs the model with an explicit signature
(so that MLflow does not load the model again to infer one) and explicit pip
requirements (so that it does not run a requirements-inference subprocess),
and registers it as NAME: a new registered model, version 1. The data set is
the copy that ships inside scikit-learn: nothing is downloaded. Prints a JSON
summary as the last line on stdout.
"""

import argparse
import json

import mlflow
import mlflow.sklearn
import numpy as np
import sklearn
from mlflow.models import infer_signature
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    args = parser.parse_args()

    iris = load_iris(as_frame=True)
    features = iris.data
    # Species names as labels, so that a prediction reads "setosa", not 0.
    labels = np.asarray(iris.target_names)[iris.target]
    model = LogisticRegression(max_iter=1000).fit(features, labels)
    signature = infer_signature(features, model.predict(features))

    mlflow.set_experiment(f"{args.name}-experiment")
    with mlflow.start_run(run_name=f"train-{args.name}") as run:
        mlflow.log_param("max_iter", 1000)
        mlflow.log_metric("train_accuracy", float(model.score(features, labels)))
        info = mlflow.sklearn.log_model(
            model,
            name="model",
            signature=signature,
            pip_requirements=[f"scikit-learn=={sklearn.__version__}"],
            registered_model_name=args.name,
            serialization_format=mlflow.sklearn.SERIALIZATION_FORMAT_CLOUDPICKLE,
        )

    sample = features.iloc[0].tolist()
    print(
        json.dumps(
            {
                "name": args.name,
                "version": str(info.registered_model_version),
                "run_id": run.info.run_id,
                "model_uri": info.model_uri,
                "feature_names": list(features.columns),
                "sample": sample,
                "sample_prediction": str(model.predict(features.iloc[[0]])[0]),
            }
        )
    )


if __name__ == "__main__":
    main()
